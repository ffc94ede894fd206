"""The embedded local model: assembled from PyPI pieces, served by llama.cpp, used when nothing is configured."""

import subprocess
import sys


def greet(*args):
    done = subprocess.run(
        [sys.executable, "greet.py", *args], check=False, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_shout():
    assert greet("Ann", "--shout") == "HELLO, ANN!"
    assert greet("--shout", "bo", "--question") == "HELLO, BO?"


def test_plain_unchanged():
    assert greet("Ann") == "Hello, Ann!"
    assert greet("Ann", "--question") == "Hello, Ann?"

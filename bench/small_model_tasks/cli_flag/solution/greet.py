"""Prints a greeting for the name given on the command line."""

import argparse


def greeting(name, punctuation="!"):
    return f"Hello, {name}{punctuation}"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Greet someone.")
    parser.add_argument("name")
    parser.add_argument("--question", action="store_true", help="end with a question mark")
    parser.add_argument("--shout", action="store_true", help="print in upper case")
    args = parser.parse_args(argv)
    text = greeting(args.name, "?" if args.question else "!")
    print(text.upper() if args.shout else text)


if __name__ == "__main__":
    main()

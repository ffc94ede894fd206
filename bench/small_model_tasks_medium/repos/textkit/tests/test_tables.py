from textkit.case import to_camel, to_snake, to_title
from textkit.tables import render_table


def test_a_table_with_a_header_rule():
    text = render_table([["apples", "3"], ["pears", "12"]], header=["fruit", "count"])
    assert text.splitlines() == [
        "fruit   count",
        "------  -----",
        "apples      3",
        "pears      12",
    ]


def test_ascii_borders():
    text = render_table([["a", "b"]], header=["x", "y"], border="ascii")
    assert text.splitlines()[0] == "| x | y |"


def test_case_conversions():
    assert to_snake("HTTPServerError") == "http_server_error"
    assert to_camel("http_server_error") == "httpServerError"
    assert to_title("the lord of the rings") == "The Lord of the Rings"

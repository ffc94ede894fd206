from textkit.tables import render_table


def test_numeric_columns_are_right_aligned():
    rows = [["apples", "1,200", "-3.5", "45%"], ["kiwis", "7", "10.25", "5%"]]
    assert render_table(rows, header=["fruit", "count", "change", "share"]).splitlines() == [
        "fruit   count  change  share",
        "------  -----  ------  -----",
        "apples  1,200    -3.5    45%",
        "kiwis       7   10.25     5%",
    ]


def test_text_columns_stay_left_aligned():
    rows = [["a", "12 apples"], ["b", "3"]]
    assert render_table(rows).splitlines() == ["a  12 apples", "b  3"]


def test_with_borders():
    text = render_table([["x", "+1.5"], ["y", "-20"]], header=["k", "v"], border="ascii")
    assert text.splitlines()[2:] == ["| x | +1.5 |", "| y |  -20 |"]

from tags import add_tag, parse_tags


def test_each_call_gets_a_new_list():
    assert add_tag("work") == ["work"]
    assert add_tag("home") == ["home"]


def test_given_list_is_extended_once():
    mine = ["a"]
    assert add_tag("b", mine) == ["a", "b"]
    assert add_tag("b", mine) == ["a", "b"]
    assert parse_tags("x, y ,z") == ["x", "y", "z"]

from pathlib import Path

import geometry
import report


def test_renamed():
    assert geometry.rect_area(3, 4) == 12
    assert not hasattr(geometry, "area_of_rect")


def test_caller_follows():
    assert report.describe_rect(2, 5) == "2x5 rectangle, area 10"
    assert report.describe_circle(1) == "circle of radius 1, area 3.1"
    for name in ("geometry.py", "report.py"):
        assert "area_of_rect" not in Path(name).read_text()

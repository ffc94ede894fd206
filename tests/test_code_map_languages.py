"""code_map's tags per language: each grammar yields its definitions, with their lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from keel.tools.codeintel.source_files import discover
from keel.tools.codeintel.tags import extract_tags


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


SOURCES: dict[str, tuple[str, list[tuple[str, int]]]] = {
    "app.js": (
        """
        class Widget {
          render() { return draw(1); }
        }
        function draw(x) { return x; }
        const add = (a, b) => a + b;
        """,
        [("Widget", 1), ("render", 2), ("draw", 4), ("add", 5)],
    ),
    "app.ts": (
        """
        interface Shape { area(): number; }
        export class Circle implements Shape {
          area(): number { return 1; }
        }
        export function make(): Circle { return new Circle(); }
        """,
        [("Shape", 1), ("area", 1), ("Circle", 2), ("area", 3), ("make", 5)],
    ),
    "view.tsx": (
        """
        export function Button(props: Props) {
          return <button>{props.label}</button>;
        }
        """,
        [("Button", 1)],
    ),
    "main.go": (
        """
        package main

        type Server struct{ port int }

        func (s *Server) Start() error { return nil }

        func main() { (&Server{}).Start() }
        """,
        [("Server", 3), ("Start", 5), ("main", 7)],
    ),
    "lib.rs": (
        """
        pub struct Stack { items: Vec<i32> }

        impl Stack {
            pub fn push(&mut self, x: i32) { self.items.push(x) }
        }

        pub fn make() -> Stack { Stack { items: vec![] } }
        """,
        [("Stack", 1), ("Stack", 3), ("push", 4), ("make", 7)],
    ),
    "Shop.java": (
        """
        public class Shop {
          public Shop() {}
          public int count(int n) { return n; }
        }
        """,
        [("Shop", 1), ("Shop", 2), ("count", 3)],
    ),
    "util.c": (
        """
        #include <stdio.h>

        struct point { int x; };

        int add(int a, int b) { return a + b; }

        static char **names(void) { return 0; }
        """,
        [("point", 3), ("add", 5), ("names", 7)],
    ),
    "geo.cpp": (
        """
        namespace geo {
        class Shape {
         public:
          int sides() { return 3; }
        };
        }

        double area(const geo::Shape& s) { return 0; }
        """,
        [("geo", 1), ("Shape", 2), ("sides", 4), ("area", 8)],
    ),
    "cart.rb": (
        """
        module Shop
          class Cart
            def add(item)
              @items << item
            end
          end
        end

        def helper; end
        """,
        [("Shop", 1), ("Cart", 2), ("add", 3), ("helper", 9)],
    ),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_language_yields_its_definitions_with_lines(name: str, tmp_path: Path) -> None:
    text, expected = SOURCES[name]
    path = write(tmp_path, name, text)
    [source] = discover(tmp_path, tmp_path)
    tags = extract_tags(path.read_bytes(), source.language)
    assert [(d.name, d.line) for d in tags.definitions] == expected

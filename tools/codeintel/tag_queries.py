"""The tree-sitter queries tag extraction (tags.py) runs, per language: definitions and the prose in which words
are not uses."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LanguageSpec:
    """How tags are found in one language: its tree-sitter queries and how deep definitions start."""

    definitions: str  # query: each pattern captures @def.<kind> and usually @name
    prose: str  # query capturing @text: string contents and comments, where words are not uses
    max_depth: int  # deepest tree level a definition may start at (bounds the query's walk)


_C_TEXT = "[(string_content) (char_literal) (system_lib_string) (comment)] @text"
_JS_TEXT = "[(string_fragment) (regex_pattern) (comment)] @text"

_C_DEFINITIONS = """
(function_definition) @def.function
(declaration declarator: (function_declarator)) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro
(preproc_def name: (identifier) @name) @def.constant
"""

_JS_DEFINITIONS = """
(class_declaration name: (_) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: (_) @name) @def.method
(lexical_declaration
  (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @def.function
(variable_declaration
  (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @def.function
"""

_TS_DEFINITIONS = (
    _JS_DEFINITIONS
    + """
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (identifier) @name) @def.function
(internal_module name: (_) @name) @def.module
"""
)

SPECS: dict[str, LanguageSpec] = {
    "python": LanguageSpec(
        """
        (class_definition name: (identifier) @name) @def.class
        (function_definition name: (identifier) @name) @def.function
        """,
        "[(string_content) (comment)] @text",
        5,
    ),
    "javascript": LanguageSpec(_JS_DEFINITIONS, _JS_TEXT, 6),
    "typescript": LanguageSpec(_TS_DEFINITIONS, _JS_TEXT, 6),
    "tsx": LanguageSpec(_TS_DEFINITIONS, _JS_TEXT, 6),
    "go": LanguageSpec(
        """
        (function_declaration name: (identifier) @name) @def.function
        (method_declaration name: (field_identifier) @name) @def.method
        (type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
        (type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
        (type_spec name: (type_identifier) @name) @def.type
        (method_elem name: (field_identifier) @name) @def.method
        (const_spec name: (identifier) @name) @def.constant
        """,
        "[(interpreted_string_literal_content) (raw_string_literal_content) (comment)] @text",
        6,
    ),
    "rust": LanguageSpec(
        """
        (struct_item name: (type_identifier) @name) @def.struct
        (union_item name: (type_identifier) @name) @def.struct
        (enum_item name: (type_identifier) @name) @def.enum
        (trait_item name: (type_identifier) @name) @def.trait
        (impl_item type: (_) @name) @def.impl
        (function_item name: (identifier) @name) @def.function
        (function_signature_item name: (identifier) @name) @def.function
        (mod_item name: (identifier) @name) @def.module
        (type_item name: (type_identifier) @name) @def.type
        (const_item name: (identifier) @name) @def.constant
        (static_item name: (identifier) @name) @def.constant
        (macro_definition name: (identifier) @name) @def.macro
        """,
        "[(string_content) (char_literal) (line_comment) (block_comment)] @text",
        7,
    ),
    "java": LanguageSpec(
        """
        (class_declaration name: (identifier) @name) @def.class
        (record_declaration name: (identifier) @name) @def.class
        (interface_declaration name: (identifier) @name) @def.interface
        (annotation_type_declaration name: (identifier) @name) @def.interface
        (enum_declaration name: (identifier) @name) @def.enum
        (method_declaration name: (identifier) @name) @def.method
        (constructor_declaration name: (identifier) @name) @def.method
        """,
        "[(string_fragment) (multiline_string_fragment) (line_comment) (block_comment)] @text",
        7,
    ),
    "c": LanguageSpec(_C_DEFINITIONS, _C_TEXT, 5),
    "cpp": LanguageSpec(
        _C_DEFINITIONS
        + """
        (class_specifier name: (type_identifier) @name body: (_)) @def.class
        (namespace_definition name: (namespace_identifier) @name) @def.module
        (field_declaration declarator: (function_declarator)) @def.method
        """,
        _C_TEXT[:-7] + " (raw_string_content)] @text",
        9,
    ),
    "ruby": LanguageSpec(
        """
        (class name: (_) @name) @def.class
        (module name: (_) @name) @def.module
        (method name: (_) @name) @def.method
        (singleton_method name: (_) @name) @def.method
        """,
        "[(string_content) (heredoc_content) (comment)] @text",
        8,
    ),
    "bash": LanguageSpec(
        "(function_definition name: (word) @name) @def.function",
        "[(string_content) (raw_string) (heredoc_content) (comment)] @text",
        4,
    ),
}

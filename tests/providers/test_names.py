import re

import pytest

from farmhand.providers.names import ToolNameMap, is_safe, sanitize

OPENAI_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_safe_names_map_to_themselves() -> None:
    names = ToolNameMap(["get_weather", "read-file", "A1"])
    assert [names.to_provider(n) for n in ("get_weather", "read-file", "A1")] == [
        "get_weather",
        "read-file",
        "A1",
    ]


def test_colon_becomes_double_underscore_and_maps_back() -> None:
    names = ToolNameMap(["filesystem:list_directory"])
    assert names.to_provider("filesystem:list_directory") == "filesystem__list_directory"
    assert names.from_provider("filesystem__list_directory") == "filesystem:list_directory"


def test_other_forbidden_characters_become_underscores() -> None:
    assert sanitize("my server:read file.v2/é") == "my_server__read_file_v2__"
    names = ToolNameMap(["my server:read file.v2"])
    assert names.to_provider("my server:read file.v2") == "my_server__read_file_v2"


def test_clashes_get_a_hash_suffix_and_the_already_safe_name_keeps_itself() -> None:
    # "a:b" would become "a__b", which is already another tool's name.
    for order in (["a:b", "a__b"], ["a__b", "a:b"]):
        names = ToolNameMap(order)
        assert names.to_provider("a__b") == "a__b"
        safe = names.to_provider("a:b")
        assert safe != "a__b"
        assert safe.startswith("a__b_")
        assert OPENAI_RULE.match(safe)
        assert names.from_provider(safe) == "a:b"
        assert names.from_provider("a__b") == "a__b"


def test_same_forbidden_spelling_twice_stays_unique() -> None:
    names = ToolNameMap(["x.y", "x y", "x/y"])
    safe = {names.to_provider(n) for n in ("x.y", "x y", "x/y")}
    assert len(safe) == 3
    assert all(OPENAI_RULE.match(s) for s in safe)
    assert {names.from_provider(s) for s in safe} == {"x.y", "x y", "x/y"}


def test_long_names_are_truncated_to_64_uniquely_and_stably() -> None:
    long_a = "server:" + "a" * 80 + "_one"
    long_b = "server:" + "a" * 80 + "_two"
    names = ToolNameMap([long_a, long_b])
    safe_a, safe_b = names.to_provider(long_a), names.to_provider(long_b)
    assert len(safe_a) == len(safe_b) == 64
    assert safe_a != safe_b
    assert OPENAI_RULE.match(safe_a) and OPENAI_RULE.match(safe_b)
    assert (names.from_provider(safe_a), names.from_provider(safe_b)) == (long_a, long_b)
    # The stand-in depends on the name alone, not on which other tools are listed.
    assert ToolNameMap([long_a]).to_provider(long_a) == safe_a


def test_a_safe_name_of_exactly_64_characters_is_kept() -> None:
    name = "t" * 64
    assert ToolNameMap([name]).to_provider(name) == name


def test_unknown_names() -> None:
    names = ToolNameMap(["fs:read"])
    assert names.from_provider("never_listed") == "never_listed"
    assert names.to_provider("other:tool") == "other__tool"
    assert "fs:read" in names
    assert "other:tool" not in names


def test_duplicates_and_empty_names() -> None:
    names = ToolNameMap(["fs:read", "fs:read", ""])
    assert len(names) == 2
    assert OPENAI_RULE.match(names.to_provider(""))
    assert names.from_provider(names.to_provider("")) == ""


@pytest.mark.parametrize("name", ["ok", "a-b_c", "x" * 64])
def test_is_safe(name: str) -> None:
    assert is_safe(name)


@pytest.mark.parametrize("name", ["", "a:b", "a.b", "x" * 65, "é"])
def test_is_not_safe(name: str) -> None:
    assert not is_safe(name)

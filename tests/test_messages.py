from farmhand.messages import ToolCall


def test_call_key_ignores_argument_order_and_id() -> None:
    a = ToolCall("fs:read", {"path": "a", "lines": 2})
    b = ToolCall("fs:read", {"lines": 2, "path": "a"})
    assert a.id != b.id
    assert a.key() == b.key()
    assert a.key() != ToolCall("fs:read", {"path": "b", "lines": 2}).key()
    assert a.key() != ToolCall("fs:list", {"path": "a", "lines": 2}).key()

"""jsonwire: orjson's speed without losing what the standard library could encode or read."""

from __future__ import annotations

import json
import math

import pytest

from farmhand import jsonwire
from farmhand.server.json_response import JSONResponse
from farmhand.server.streaming import encode


def test_ordinary_values_come_out_compact_with_non_ascii_kept() -> None:
    value = {"text": "héllo ✓", "n": [1, 2.5, None, True]}
    assert jsonwire.dumps(value) == '{"text":"héllo ✓","n":[1,2.5,null,true]}'.encode()


@pytest.mark.parametrize(
    "value",
    [
        {"big": 2**70},  # past orjson's 64-bit integers
        {1: "a key that is not a string"},
        {"surrogate": "\ud800 alone"},
    ],
)
def test_what_orjson_refuses_is_encoded_by_json(value: object) -> None:
    data = jsonwire.dumps(value)
    data.decode("utf-8")  # still valid UTF-8, the lone surrogate escaped
    assert json.loads(data) == json.loads(json.dumps(value))


def test_a_stream_chunk_with_a_huge_integer_is_still_written() -> None:
    # A model can write any number into a call's arguments; the chunk must still go out.
    assert encode({"arguments": {"n": 10**30}}, "sse") == (
        b'data: {"arguments":{"n":' + str(10**30).encode() + b"}}\n\n"
    )


def test_reading_falls_back_to_json_for_what_orjson_refuses() -> None:
    assert jsonwire.loads('{"a": 1}') == {"a": 1}
    assert math.isnan(jsonwire.loads('{"x": NaN}')["x"])  # json reads NaN; orjson refuses it
    with pytest.raises(json.JSONDecodeError) as caught:
        jsonwire.loads('{"a": ')
    assert "Expecting value" in caught.value.msg


def test_a_response_with_nan_is_answered_with_null_not_a_server_error() -> None:
    response = JSONResponse({"score": float("nan"), "ok": "ü"})
    assert response.body == '{"score":null,"ok":"ü"}'.encode()
    assert response.headers["content-type"] == "application/json"

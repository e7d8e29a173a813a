"""A tool called by hand whose server asks a question mid-call (elicitation), over HTTP:
the call answers with the question, the answer goes on to the result; an answer that does
not fit the form leaves the question open; a question is answered once, and only through
the route of the calls by hand."""

from __future__ import annotations

import httpx
from tests.playground.conftest import Playground

CALL, ANSWER = "/api/mcp/call", "/api/mcp/call/answer"
SECONDS = 60


def ask_for_pizza(playground: Playground) -> dict[str, object]:
    reply = httpx.post(
        playground.server.url + CALL,
        json={"server": "ask", "tool": "order_pizza", "arguments": {}},
        timeout=SECONDS,
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["server"] == "ask" and body["tool"] == "order_pizza" and "output" not in body
    question: dict[str, object] = body["question"]
    assert question["type"] == "mcp_elicitation_request" and question["mode"] == "form"
    assert question["message"] == "Which pizza shall I order?"
    return question


def answer(playground: Playground, body: dict[str, object]) -> httpx.Response:
    return httpx.post(playground.server.url + ANSWER, json=body, timeout=SECONDS)


def test_the_question_is_answered_and_the_call_completes(playground: Playground) -> None:
    question = ask_for_pizza(playground)
    schema = question["requested_schema"]
    assert isinstance(schema, dict) and "name" in schema["properties"]

    unfit = answer(
        playground, {"question_id": question["id"], "action": "accept", "content": {"size": 9}}
    )
    assert unfit.status_code == 400 and "does not fit" in unfit.json()["error"], unfit.text

    content = {"name": "Ada", "size": "small", "toppings": 1}
    done = answer(
        playground, {"question_id": question["id"], "action": "accept", "content": content}
    )
    assert done.status_code == 200, done.text
    assert done.json() == {
        "server": "ask",
        "tool": "order_pizza",
        "output": "ordered a small pizza with 1 toppings for Ada",
        "is_error": False,
    }
    again = answer(playground, {"question_id": question["id"], "action": "accept"})
    assert again.status_code == 404 and "no call by hand waits" in again.json()["error"]
    assert playground.state.hand_questions == {}


def test_a_declined_question_ends_the_call_with_the_servers_words(
    playground: Playground,
) -> None:
    question = ask_for_pizza(playground)
    done = answer(playground, {"question_id": question["id"], "action": "decline"})
    assert done.json()["output"] == "no pizza ordered: the user chose decline"


def test_a_hand_calls_question_is_not_answered_through_a_chat(playground: Playground) -> None:
    question = ask_for_pizza(playground)
    item = {"type": "mcp_elicitation_response", "elicitation_request_id": question["id"]}
    chat = httpx.post(
        playground.server.url + "/v1/responses",
        json={"model": "farm", "input": [{**item, "action": "decline"}]},
        timeout=SECONDS,
    )
    assert chat.status_code == 404 and "POST /api/mcp/call/answer" in chat.text
    done = answer(playground, {"question_id": question["id"], "action": "cancel"})
    assert done.json()["output"] == "no pizza ordered: the user chose cancel"


def test_bad_answers_say_what_to_send(playground: Playground) -> None:
    for body, says, status in [
        ({"action": "accept"}, "question_id must be", 400),
        ({"question_id": "ask_x", "action": "maybe"}, "action must be one of", 400),
        ({"question_id": "ask_x", "action": "accept", "content": [1]}, "content must be", 400),
        ({"question_id": "ask_x", "action": "accept", "extra": 1}, "unknown field", 400),
        ({"question_id": "ask_nobody", "action": "accept"}, "no call by hand waits", 404),
    ]:
        reply = answer(playground, body)
        assert reply.status_code == status and says in reply.json()["error"], reply.text

"""The playground at `/` in headless chromium, against a live app: a chat streams, a tool
call shows as a card with its arguments and result from the real filesystem server, Stop
cancels the model's turn on the server, a call's arguments show as they are written and each
round of the loop opens with a divider, approvals and a server's form are answered in the
page, and conversations are listed and opened again. Each state is kept as a screenshot."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from playwright.sync_api import Page, expect
from tests.playground.conftest import Playground
from tests.support.real_servers import wait_until

from farmhand.messages import Message, ToolCall, ToolCallDelta, ToolCallEvent, Usage
from farmhand.providers.scripted import Step
from farmhand.tools.definition import ToolDefinition

SECONDS = re.compile(r"^\d+\.\d\d s$")


def sees_result(text: str) -> Callable[[Sequence[Message], Sequence[ToolDefinition]], None]:
    def check(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-1].role == "tool" and text in messages[-1].content, messages[-1]

    return check


def ask(page: Page, text: str) -> None:
    page.fill("#prompt", text)
    page.press("#prompt", "Enter")


def test_a_chat_streams_text_and_shows_the_tool_call_card(
    page: Page, playground: Playground
) -> None:
    listing = ToolCall("fs:list_directory", {"path": str(playground.folder)})
    playground.model.script.add(
        Step.calls(listing, text="Let me look in the farm folder. ", usage=Usage(100, 20)),
        Step.text(
            "The folder holds barn.txt, pond.txt and silo.txt.",
            expect=sees_result("barn.txt"),
            usage=Usage(150, 12),
        ),
    )
    ask(page, "List the files in the farm folder")

    card = page.locator(".card.tool")
    expect(card.locator(".badge")).to_have_text("completed")
    expect(card.locator("header")).to_contain_text("fs · list_directory")
    assert json.loads(card.locator(".arguments").inner_text()) == {"path": str(playground.folder)}
    expect(card.locator(".result")).to_contain_text("[FILE] silo.txt")
    expect(card.locator(".duration")).to_have_text(SECONDS)
    answers = page.locator(".message.assistant .text")
    expect(answers.first).to_have_text("Let me look in the farm folder. ")
    expect(answers.last).to_have_text("The folder holds barn.txt, pond.txt and silo.txt.")
    expect(page.locator(".turn-stats")).to_contain_text("250 tokens in, 32 out · 1 tool round")
    expect(page.locator(".message.user .text")).to_have_text("List the files in the farm folder")
    page.screenshot(path=playground.shots / "chat-with-tool-card.png")


def test_arguments_show_as_they_are_written_and_each_round_has_a_divider(
    page: Page, playground: Playground
) -> None:
    folder = str(playground.folder)
    listing = ToolCall("fs:list_directory", {"path": folder}, id="call_list")
    written = json.dumps(listing.arguments)
    half = len(written) // 2
    reading = ToolCall("fs:read_text_file", {"path": f"{folder}/pond.txt"})
    playground.model.script.add(
        Step(
            (
                ToolCallDelta(0, name=listing.name, id=listing.id),
                ToolCallDelta(0, arguments=written[:half]),
                ToolCallDelta(0, arguments=written[half:]),
                ToolCallEvent(listing),
            )
        ),
        Step.calls(reading, expect=sees_result("pond.txt")),
        Step.text("The pond has ducks.", expect=sees_result("ducks")),
    )
    playground.model.resume.clear()
    playground.model.waiting.clear()
    playground.model.pause_in_arguments = True
    ask(page, "What is in the pond file?")

    card = page.locator(".card.tool").first
    expect(card.locator(".arguments")).to_have_text(written[:half])  # half written so far
    expect(card.locator(".badge")).to_have_text("writing")
    assert playground.model.waiting.is_set()
    page.screenshot(path=playground.shots / "arguments-streaming.png")

    playground.model.resume.set()
    expect(card.locator(".badge")).to_have_text("completed")
    assert json.loads(card.locator(".arguments").inner_text()) == {"path": folder}
    expect(page.locator(".message.assistant .text")).to_have_text("The pond has ducks.")
    # Round 1 lists, round 2 reads, round 3 answers: a divider opens each after the first.
    expect(page.locator("#transcript .round")).to_have_text(["Round 2", "Round 3"])
    order = page.locator("#transcript > *").evaluate_all("nodes => nodes.map(n => n.className)")
    assert order == [
        "message user",
        "card tool",
        "round",
        "card tool",
        "round",
        "message assistant",
        "turn-stats muted",
    ]
    expect(page.locator(".turn-stats")).to_contain_text("2 tool rounds")
    page.screenshot(path=playground.shots / "rounds.png")


def test_reasoning_and_long_results_fold_and_a_failed_call_shows_its_error(
    page: Page, playground: Playground
) -> None:
    ledger = playground.folder / "ledger.txt"
    ledger.write_text("\n".join(f"day {n}: {n} eggs" for n in range(1, 120)))
    thought = "The ledger may be long; read it."
    outside = ToolCall("fs:read_text_file", {"path": "/etc/hostname"})
    try:
        playground.model.script.add(
            Step.calls(ToolCall("fs:read_text_file", {"path": str(ledger)}), reasoning=thought),
            Step.calls(outside, expect=sees_result("day 119: 119 eggs")),
            Step.text("119 days of eggs.", expect=sees_result("/etc/hostname")),
        )
        ask(page, "How many days are in the ledger?")
        expect(page.locator(".message.assistant .text")).to_have_text("119 days of eggs.")
    finally:
        ledger.unlink()
    reasoning = page.locator("details.reasoning")
    expect(reasoning).not_to_have_attribute("open", "")  # folded until clicked
    expect(reasoning.locator(".reasoning-text")).to_be_hidden()
    reasoning.locator("summary").click()
    expect(reasoning.locator(".reasoning-text")).to_have_text(thought)

    long, failed = page.locator(".card.tool").all()
    folded = long.locator("details.folded")
    expect(folded.locator("summary")).to_contain_text("show all")
    expect(folded.locator(":scope > pre.result")).to_be_hidden()
    folded.locator("summary").click()
    expect(folded.locator(":scope > pre.result")).to_contain_text("day 119: 119 eggs")
    expect(failed.locator(".badge")).to_have_text("failed")
    expect(failed.locator(".label")).to_have_text(["Arguments", "Error"])
    expect(failed.locator("pre.result.error")).to_contain_text("/etc/hostname")


def test_the_system_prompt_and_sampling_reach_the_model(page: Page, playground: Playground) -> None:
    playground.model.script.add(Step.text("Ready, boss."))
    page.click("#settings summary")
    page.fill("#instructions", "You are a terse farmhand.")
    page.fill("#temperature", "0.3")
    page.fill("#max-tokens", "64")
    ask(page, "Ready?")
    expect(page.locator(".message.assistant .text")).to_have_text("Ready, boss.")
    sent = playground.model.script.requests[-1]
    assert sent.messages[0].role == "system"
    assert "You are a terse farmhand." in sent.messages[0].content
    assert (sent.settings.temperature, sent.settings.max_tokens) == (0.3, 64)


def test_stop_cancels_the_turn_on_the_server(page: Page, playground: Playground) -> None:
    playground.model.hold = True
    playground.model.waiting.clear()
    playground.model.cancelled.clear()
    ask(page, "Count the sheep")
    expect(page.locator(".message.assistant .text").last).to_have_text("Counting the sheep, ")
    assert playground.model.waiting.wait(30)
    expect(page.locator("#stop")).to_be_enabled()
    page.screenshot(path=playground.shots / "answering.png")

    page.click("#stop")
    expect(page.locator(".note.stopped")).to_have_text("Stopped.")
    assert playground.model.cancelled.wait(30), "the model's turn went on after Stop"
    runner = playground.state.chat_runner()
    assert wait_until(lambda: runner.running == 0, timeout=30)
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#stop")).to_be_disabled()


def test_an_approval_is_shown_and_approving_runs_the_call(
    page: Page, playground: Playground
) -> None:
    playground.model.script.add(Step.calls(ToolCall("gate:wipe", {"target": "barn"})))
    ask(page, "Wipe the barn")
    question = page.locator(".card.question")
    expect(question.locator("header")).to_have_text("Approve gate · wipe?")
    assert json.loads(question.locator(".arguments").inner_text()) == {"target": "barn"}
    page.screenshot(path=playground.shots / "approval.png")

    playground.model.script.add(Step.text("The barn is wiped.", expect=sees_result("wiped barn")))
    question.get_by_role("button", name="Approve").click()
    expect(question).to_have_text("Approved")
    card = page.locator(".card.tool")
    expect(card.locator(".badge")).to_have_text("completed")
    expect(card.locator(".result")).to_have_text("wiped barn")
    expect(page.locator(".message.assistant .text").last).to_have_text("The barn is wiped.")


def test_denying_tells_the_model(page: Page, playground: Playground) -> None:
    playground.model.script.add(Step.calls(ToolCall("gate:wipe", {"target": "silo"})))
    ask(page, "Wipe the silo")
    question = page.locator(".card.question")
    told = sees_result("gate:wipe was not run: the user declined it")
    playground.model.script.add(Step.text("I left the silo alone.", expect=told))
    question.get_by_role("button", name="Deny").click()
    expect(page.locator(".card.tool .badge")).to_have_text("failed")
    expect(page.locator(".message.assistant .text").last).to_have_text("I left the silo alone.")


def test_a_server_form_is_filled_in_the_page(page: Page, playground: Playground) -> None:
    playground.model.script.add(Step.calls(ToolCall("ask:order_pizza", {})))
    ask(page, "Order a pizza")
    question = page.locator(".card.question")
    expect(question).to_contain_text("Which pizza shall I order?")
    question.get_by_label("Name").fill("Ada")
    question.get_by_label("Size").select_option(label="small")
    page.screenshot(path=playground.shots / "elicitation.png")

    ordered = sees_result("ordered a small pizza with 2 toppings for Ada")
    playground.model.script.add(Step.text("Ordered.", expect=ordered))
    question.get_by_role("button", name="Send").click()
    expect(page.locator(".message.assistant .text").last).to_have_text("Ordered.")
    expect(page.locator(".card.tool .result")).to_have_text(
        "ordered a small pizza with 2 toppings for Ada"
    )


def test_conversations_are_listed_and_open_again(page: Page, playground: Playground) -> None:
    playground.model.script.add(Step.text("Hello, farmer."))
    ask(page, "Say hello to the farmer")
    expect(page.locator(".message.assistant .text")).to_have_text("Hello, farmer.")
    listed = page.locator("#conversations .conversation", has_text="Say hello to the farmer")
    expect(listed).to_have_count(1)

    # The next message goes on from the stored response (previous_response_id).
    def history(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [m.content for m in messages if m.role == "user"] == [
            "Say hello to the farmer",
            "And to the cows",
        ]

    playground.model.script.add(Step.text("Moo to you.", expect=history))
    ask(page, "And to the cows")
    expect(page.locator(".message.assistant .text").last).to_have_text("Moo to you.")
    expect(listed).to_have_count(1)  # one conversation, now two turns long

    page.click("#new-chat")
    expect(page.locator("#transcript .message")).to_have_count(0)
    listed.click()
    texts = page.locator("#transcript .message .text")
    expect(texts).to_have_text(
        ["Say hello to the farmer", "Hello, farmer.", "And to the cows", "Moo to you."]
    )
    page.screenshot(path=playground.shots / "conversations.png")

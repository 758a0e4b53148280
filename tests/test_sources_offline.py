"""An offline machine is recognised at once: a Hub fetch without network fails in seconds, before
huggingface_hub's own retries (about 25 s a request), with the ways forward and the document that explains them.

The network is faked away under the real code: the name lookup fails (no DNS, the usual offline case) or never
answers (a black-holed link), and huggingface_hub's HTTP transports fail the test if a request gets that far.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx2
import pytest
from huggingface_hub import constants

from isonorm.checkpoints import fetch_checkpoint
from isonorm.data.texts import fetch_texts
from isonorm.sources import HubUnreachableError
from isonorm.sources import hub

REAL_PROBE = hub.hub_unreachable
WAYS_FORWARD = ("docs/data.md, 'Pre-staging for offline machines'", "--config compute=data-free",
                "--configfile presets/quick.yaml")


@pytest.fixture
def network_gone(monkeypatch, tmp_path):
    """No name resolves; an HTTP request that gets past the probe fails the test; an empty Hugging Face cache."""
    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    def send(self, request, *args, **kwargs):
        pytest.fail(f"a request reached the network layer after the probe: {request.method} {request.url}")

    monkeypatch.setattr(hub, "hub_unreachable", REAL_PROBE)
    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", send)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    for variable in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)


def test_offline_checkpoint_fetch_fails_in_seconds_with_the_ways_forward(network_gone, tmp_path):
    start = time.perf_counter()
    with pytest.raises(HubUnreachableError) as err:
        fetch_checkpoint("gpt2", tmp_path / "checkpoints", source="huggingface")
    elapsed = time.perf_counter() - start
    message = str(err.value)
    assert elapsed < 10, f"an offline fetch took {elapsed:.1f} s"
    assert "cannot connect to huggingface.co:443: gaierror" in message.splitlines()[0]  # the cause first
    assert "holds no snapshot of openai-community/gpt2" in message  # then what the cache has
    assert all(way in message for way in WAYS_FORWARD), message
    assert "README" not in message  # the section it once pointed to lives in docs/data.md
    assert not (tmp_path / "checkpoints" / "gpt2" / ".ready").exists()


def test_offline_text_download_fails_before_any_request(network_gone, tmp_path):
    start = time.perf_counter()
    with pytest.raises(HubUnreachableError, match="could not reach the Hugging Face Hub") as err:
        fetch_texts("simplewiki", tmp_path, "huggingface")
    assert time.perf_counter() - start < 10
    assert all(way in str(err.value) for way in WAYS_FORWARD)
    assert "`local` (a texts.json) or `shipped`" in str(err.value)  # the sources of this kind that need no network


def test_probe_gives_up_on_a_link_that_never_answers(monkeypatch):
    """A black-holed link (the lookup hangs): the probe answers within its time-out, from a daemon thread."""
    release = threading.Event()

    def hanging(*args, **kwargs):
        release.wait(30)
        raise socket.gaierror("released")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    for variable in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    start = time.perf_counter()
    cause = REAL_PROBE(timeout_s=0.5)
    release.set()
    assert time.perf_counter() - start < 2
    assert cause == "no answer from huggingface.co:443 within 0.5 s"


def test_probe_goes_through_the_https_proxy(monkeypatch):
    """Behind a proxy the Hub's own host may not resolve while downloads work: the proxy is what is probed."""
    asked = []

    def lookup(host, port, *args, **kwargs):
        asked.append((host, port))
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    cause = REAL_PROBE(timeout_s=2)
    assert asked == [("proxy.example", 3128)]
    assert "proxy.example:3128 (the HTTPS proxy of this environment)" in cause


def test_hf_hub_offline_is_answered_by_the_cache_alone(network_gone, monkeypatch, tmp_path):
    """HF_HUB_OFFLINE=1: no probe, no retries; the message says the variable is set."""
    monkeypatch.setattr(hub, "hub_unreachable", lambda *a, **k: pytest.fail("probed although HF_HUB_OFFLINE=1"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    start = time.perf_counter()
    with pytest.raises(HubUnreachableError, match="HF_HUB_OFFLINE is set") as err:
        fetch_texts("simplewiki", tmp_path, "huggingface")
    assert time.perf_counter() - start < 10
    assert all(way in str(err.value) for way in WAYS_FORWARD)

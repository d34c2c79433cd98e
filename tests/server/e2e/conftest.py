"""Starts `tern serve` on the tiny model (TERN_BINARY, TERN_MODEL from scripts/e2e.sh) on a free
127.0.0.1 port, and hands tests an openai client and the base URL."""
import os
import socket
import subprocess
import time

import httpx
import openai
import pytest

MODEL = "tiny"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *extra):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(os.environ.get("TERN_E2E_LOGS", "/tmp"), f"tern-serve-{self.port}.log"), "w")
        self.proc = subprocess.Popen(
            [os.environ["TERN_BINARY"], "serve", os.environ["TERN_MODEL"], "--port", str(self.port),
             "--model-name", MODEL, *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            assert self.proc.poll() is None, f"tern serve exited with {self.proc.returncode}"
            try:
                if httpx.get(self.url + "/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("tern serve did not become ready")

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def metric(self, name):
        text = httpx.get(self.url + "/metrics").text
        total = 0.0
        found = False
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
                found = True
        assert found, name
        return total

    def stop(self):
        self.proc.terminate()
        code = self.proc.wait(timeout=30)
        self.log.close()
        return code


@pytest.fixture(scope="session")
def server():
    s = Server("--parallel", "8", "--ctx-size", "1024", "--max-queue", "128", "--max-body", "65536",
               "--max-tokens", "512", "--cache-mb", "64", "--max-n", "4")
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="session")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=120)

#!/usr/bin/env python3
"""Load test of `tern serve`: starts the server, warms it up, runs N concurrent streaming chat clients
of which a share disconnect at a random point, then stops it with SIGTERM and checks that it exits 0.
Prints one JSON line: p50/p99 time to first token and inter-token latency, aggregate generated tok/s,
RSS before and after the load. With a sanitizer build (ASan/UBSan) it also fails if the server log
holds any sanitizer report, leaks included (LeakSanitizer runs at exit).

Run it from the e2e venv (httpx), e.g.:
  tests/server/e2e/.venv/bin/python scripts/load_test.py --binary build-asan/tern --model tiny.gguf \\
      -- --parallel 8 --kv-type q8
Arguments after `--` go to `tern serve`."""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "SUMMARY: UndefinedBehaviorSanitizer")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] if values else float("nan")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def metric(url, name):
    total = 0.0
    for line in httpx.get(url + "/metrics", timeout=30).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def one_client(url, seed, disconnect_share, max_tokens, results):
    rng = random.Random(seed)
    disconnect_after = rng.randint(1, 20) if rng.random() < disconnect_share else None
    body = {"model": "load", "stream": True, "max_tokens": rng.randint(4, max_tokens), "temperature": 0.8,
            "seed": seed, "messages": [{"role": "user", "content": f"Tell me story number {seed} " * rng.randint(1, 4)}],
            "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    times, chunks, done, finish = [], 0, False, None
    try:
        with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=600) as r:
            if r.status_code != 200:
                raise RuntimeError(f"status {r.status_code}: {r.read()!r}")
            for line in r.iter_lines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    done = True
                    break
                chunk = json.loads(line[6:])
                for choice in chunk["choices"]:
                    delta = choice["delta"]
                    if delta.get("content") or delta.get("reasoning_content"):
                        times.append(time.perf_counter())
                    finish = choice["finish_reason"] or finish
                chunks += 1
                if disconnect_after is not None and chunks >= disconnect_after:
                    break
        results.append({"done": done, "finish": finish, "start": start, "times": times})
    except Exception as e:  # reported below
        results.append({"error": repr(e)})


def run_clients(url, count, seed0, disconnect_share, max_tokens):
    results = []
    threads = [threading.Thread(target=one_client, args=(url, seed0 + i, disconnect_share, max_tokens, results))
               for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True, help="tern binary")
    parser.add_argument("--model", required=True, help="model file")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--disconnect-share", type=float, default=0.25)
    parser.add_argument("--max-tokens", type=int, default=32, help="largest max_tokens a client asks")
    parser.add_argument("serve_args", nargs="*", help="extra tern serve arguments (after --)")
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log = tempfile.NamedTemporaryFile("w+", prefix="tern-load-", suffix=".log", delete=False)
    env = dict(os.environ)
    # Sanitizer builds: reports go to the log, leaks are checked at exit and make the exit status non-zero.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:quarantine_size_mb=8")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    proc = subprocess.Popen([args.binary, "serve", args.model, "--port", str(port), "--model-name", "load",
                             *args.serve_args], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + 300
        while True:
            if proc.poll() is not None:
                sys.exit(f"tern serve exited with {proc.returncode}; log: {log.name}")
            try:
                if httpx.get(url + "/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline:
                sys.exit("tern serve did not become ready")
            time.sleep(0.2)

        run_clients(url, 8, 1000, 0.0, args.max_tokens)  # warm-up: first-touch allocations
        time.sleep(0.5)
        rss_before = rss_kib(proc.pid)
        generated_before = metric(url, "tern:generation_tokens_total")
        t0 = time.perf_counter()
        results = run_clients(url, args.clients, 0, args.disconnect_share, args.max_tokens)
        elapsed = time.perf_counter() - t0
        generated = metric(url, "tern:generation_tokens_total") - generated_before
        for _ in range(400):
            if metric(url, "tern:num_requests_running") == 0 and metric(url, "tern:num_requests_waiting") == 0:
                break
            time.sleep(0.05)
        idle = metric(url, "tern:num_requests_running") == 0 and metric(url, "tern:kv_cache_usage_perc") == 0
        rss_after = rss_kib(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        log.flush()

    log.seek(0)
    server_log = log.read()
    reports = [line for line in server_log.splitlines() if any(m in line for m in SANITIZER_MARKERS)]
    errors = [r["error"] for r in results if "error" in r]
    completed = [r for r in results if r.get("done")]
    ttft = [r["times"][0] - r["start"] for r in completed if r["times"]]
    itl = [b - a for r in completed for a, b in zip(r["times"], r["times"][1:])]
    report = {"clients": args.clients, "completed": len(completed), "disconnected": args.clients - len(completed) - len(errors),
              "errors": len(errors), "ttft_p50_ms": 1e3 * percentile(ttft, 50), "ttft_p99_ms": 1e3 * percentile(ttft, 99),
              "itl_p50_ms": 1e3 * percentile(itl, 50), "itl_p99_ms": 1e3 * percentile(itl, 99),
              "aggregate_tok_s": generated / elapsed, "elapsed_s": elapsed, "rss_before_kib": rss_before,
              "rss_after_kib": rss_after, "idle_after": idle, "exit_code": code, "sanitizer_reports": len(reports),
              "log": log.name}
    print("LOAD " + json.dumps(report))
    ok = not errors and idle and code == 0 and not reports and len(results) == args.clients
    if not ok:
        for line in errors[:5] + reports[:20]:
            print(line, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

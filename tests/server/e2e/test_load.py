"""Load: 64 concurrent streaming clients, a quarter of which disconnect at a random point. Every
completed stream must be whole, no request lost, the server idle and its memory back near the
baseline afterwards. Prints p50/p99 TTFT and inter-token latency and the aggregate rate."""
import json
import random
import statistics
import threading
import time

import httpx

from conftest import MODEL

CLIENTS = 64


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] if values else float("nan")


def one_client(url, seed, results):
    rng = random.Random(seed)
    disconnect_after = rng.randint(1, 20) if rng.random() < 0.25 else None
    body = {"model": MODEL, "stream": True, "max_tokens": rng.randint(4, 32), "temperature": 0.8, "seed": seed,
            "messages": [{"role": "user", "content": f"Tell me story number {seed} " * rng.randint(1, 4)}],
            "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    times, chunks, done, usage, finish = [], 0, False, None, None
    try:
        with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=300) as r:
            assert r.status_code == 200, r.read()
            for line in r.iter_lines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    done = True
                    break
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    usage = chunk["usage"]
                for choice in chunk["choices"]:
                    delta = choice["delta"]
                    if delta.get("content") or delta.get("reasoning_content"):
                        times.append(time.perf_counter())
                    finish = choice["finish_reason"] or finish
                chunks += 1
                if disconnect_after is not None and chunks >= disconnect_after:
                    break
        results.append({"disconnect": disconnect_after is not None and not done, "done": done, "usage": usage,
                        "finish": finish, "start": start, "times": times})
    except Exception as e:  # recorded, asserted on below
        results.append({"error": repr(e)})


def test_64_streaming_clients_with_disconnects(server):
    # Warm up (first-touch allocations), then take the baseline.
    threads = [threading.Thread(target=one_client, args=(server.url, 1000 + i, [])) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    time.sleep(0.5)
    baseline = server.rss_kib()
    generated_before = server.metric("tern:generation_tokens_total")

    results = []
    t0 = time.perf_counter()
    threads = [threading.Thread(target=one_client, args=(server.url, i, results)) for i in range(CLIENTS)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    elapsed = time.perf_counter() - t0

    assert len(results) == CLIENTS, "a client was lost"
    errors = [r["error"] for r in results if "error" in r]
    assert not errors, errors
    completed = [r for r in results if r["done"]]
    for r in completed:
        assert r["finish"] in ("stop", "length")
        assert r["usage"] and r["usage"]["completion_tokens"] >= len(r["times"]) > 0
    assert len(completed) + sum(r["disconnect"] for r in results) == CLIENTS

    for _ in range(200):
        if server.metric("tern:num_requests_running") == 0 and server.metric("tern:num_requests_waiting") == 0:
            break
        time.sleep(0.05)
    assert server.metric("tern:num_requests_running") == 0
    assert server.metric("tern:kv_cache_usage_perc") == 0
    after = server.rss_kib()
    # The prefix cache may hold up to its 64 MiB budget; nothing else may grow.
    assert after <= baseline + 64 * 1024 + 16 * 1024, (baseline, after)

    ttft = [r["times"][0] - r["start"] for r in completed]
    itl = [b - a for r in completed for a, b in zip(r["times"], r["times"][1:])]
    tokens = server.metric("tern:generation_tokens_total") - generated_before
    report = {"clients": CLIENTS, "completed": len(completed), "disconnected": CLIENTS - len(completed),
              "ttft_p50_ms": 1e3 * percentile(ttft, 50), "ttft_p99_ms": 1e3 * percentile(ttft, 99),
              "itl_p50_ms": 1e3 * percentile(itl, 50), "itl_p99_ms": 1e3 * percentile(itl, 99),
              "aggregate_tok_s": tokens / elapsed, "elapsed_s": elapsed, "rss_baseline_kib": baseline,
              "rss_after_kib": after, "mean_ttft_ms": 1e3 * statistics.mean(ttft)}
    print("\nLOAD " + json.dumps(report))

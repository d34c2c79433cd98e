"""The OpenAI API of tern serve on the tiny model, through the openai client."""
import json
import time

import httpx
import openai
import pytest

from conftest import MODEL, Server

HELLO = [{"role": "user", "content": "Hello there, how are you?"}]


def test_health_ready_models(server, client):
    assert httpx.get(server.url + "/health").json() == {"status": "ok"}
    assert httpx.get(server.url + "/ready").status_code == 200
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL]


def test_chat_completion_with_usage_and_timings(client):
    r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=12, temperature=0,
                                       extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    choice = r.choices[0]
    assert choice.message.role == "assistant"
    assert isinstance(choice.message.content, str)
    assert choice.finish_reason in ("stop", "length")
    assert r.usage.completion_tokens <= 12 and r.usage.prompt_tokens > 5
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    timings = r.model_extra["timings"]
    assert timings["predicted_n"] == r.usage.completion_tokens
    assert timings["prompt_n"] + timings["cache_n"] == r.usage.prompt_tokens


def test_chat_stream_matches_non_stream(client):
    args = dict(model=MODEL, messages=HELLO, max_tokens=16, temperature=0)
    whole = client.chat.completions.create(**args)
    chunks = list(client.chat.completions.create(**args, stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(c.choices[0].delta.model_extra.get("reasoning_content") or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert reasoning and reasoning == whole.choices[0].message.model_extra["reasoning_content"]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [whole.choices[0].finish_reason]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_completion_text_ids_and_stream(client):
    r = client.completions.create(model=MODEL, prompt="The quick brown fox", max_tokens=10, temperature=0)
    assert r.choices[0].text and r.usage.completion_tokens <= 10
    ids = httpx.post(client.base_url.join("/tokenize"), json={"content": "The quick brown fox"}).json()["tokens"]
    by_ids = client.completions.create(model=MODEL, prompt=ids, max_tokens=10, temperature=0)
    assert by_ids.choices[0].text == r.choices[0].text
    streamed = "".join(c.choices[0].text for c in client.completions.create(
        model=MODEL, prompt="The quick brown fox", max_tokens=10, temperature=0, stream=True) if c.choices)
    assert streamed == r.choices[0].text


def test_echo_with_logprobs_scores_the_prompt(client):
    ids = httpx.post(client.base_url.join("/tokenize"), json={"content": "one two three four"}).json()["tokens"]
    r = client.completions.create(model=MODEL, prompt=ids, max_tokens=3, temperature=0, echo=True, logprobs=2)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(ids) + r.usage.completion_tokens
    assert lp.token_logprobs[0] is None
    assert all(x <= 0 for x in lp.token_logprobs[1:])
    assert all(len(t) <= 2 for t in lp.top_logprobs[1:])
    assert r.choices[0].text.startswith("one two three four")


def test_streamed_completion_logprobs_match_the_whole_reply(client):
    # Before: every streamed chunk had "logprobs": null.
    args = dict(model=MODEL, prompt="The quick brown fox", max_tokens=8, temperature=0, logprobs=2)
    whole = client.completions.create(**args).choices[0].logprobs
    tokens, logprobs, offsets = [], [], []
    for chunk in client.completions.create(**args, stream=True):
        if chunk.choices and chunk.choices[0].logprobs:
            lp = chunk.choices[0].logprobs
            tokens += lp.tokens
            logprobs += lp.token_logprobs
            offsets += lp.text_offset
    assert tokens == whole.tokens and offsets == whole.text_offset
    assert logprobs == pytest.approx(whole.token_logprobs, abs=1e-4)


def test_stop_string_ends_the_output(client):
    args = dict(model=MODEL, prompt="Once upon a time", max_tokens=40, temperature=0)
    full = client.completions.create(**args).choices[0].text
    stop = full[len(full) // 2:len(full) // 2 + 3]
    assert stop
    cut = client.completions.create(**args, stop=[stop]).choices[0]
    assert cut.finish_reason == "stop"
    assert cut.text == full[:full.index(stop)]


def test_chat_logprobs(client):
    r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=5, temperature=0, logprobs=True,
                                       top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert 1 <= len(content) <= 5
    for entry in content:
        assert len(entry.top_logprobs) == 3
        values = [t.logprob for t in entry.top_logprobs]
        assert values == sorted(values, reverse=True) and entry.logprob <= values[0] + 1e-6


def test_n_choices(client):
    r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=8, n=3, temperature=1.0, seed=7,
                                       extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert r.usage.completion_tokens <= 3 * 8
    again = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=8, n=3, temperature=1.0, seed=7,
                                           extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    assert [c.message.content for c in again.choices] == [c.message.content for c in r.choices]


def test_reasoning_split(client):
    # The tiny model's template opens a think block: without a budget everything is reasoning.
    r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=20, temperature=0)
    msg = r.choices[0].message
    assert msg.model_extra.get("reasoning_content")
    # A thinking budget forces the block closed, so the rest is content.
    r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=30, temperature=0,
                                       extra_body={"thinking_budget": 4})
    msg = r.choices[0].message
    assert msg.model_extra.get("reasoning_content") and msg.content
    # Thinking off: no reasoning at all (sampled, so that the reply is not just an end token).
    r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=10, temperature=1, seed=3, n=4,
                                       extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    assert not any(c.message.model_extra.get("reasoning_content") for c in r.choices)
    assert any(c.message.content for c in r.choices)


TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                             "parameters": {"type": "object",
                                                            "properties": {"city": {"type": "string"}}}}}]


def test_tools_reach_the_prompt_and_tool_history_renders(server, client):
    prompt = httpx.post(server.url + "/apply-template", json={"messages": HELLO, "tools": TOOLS}).json()["prompt"]
    assert "get_weather" in prompt and "<tools>" in prompt
    messages = HELLO + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    r = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, max_tokens=6, temperature=0)
    assert r.choices[0].finish_reason in ("stop", "length", "tool_calls")
    for choice in ("auto", "none"):
        r = client.chat.completions.create(model=MODEL, messages=HELLO, tools=TOOLS, tool_choice=choice,
                                           max_tokens=6, temperature=0)
        assert r.choices[0].finish_reason in ("stop", "length", "tool_calls")
    # A named choice makes the reply a call to that function. The tiny model's random weights never
    # close it, so the parser releases the unfinished call as content (never dropped): it must start
    # with the forced opening.
    r = client.chat.completions.create(model=MODEL, messages=HELLO, tools=TOOLS, max_tokens=6, temperature=0,
                                       tool_choice={"type": "function", "function": {"name": "get_weather"}})
    message = r.choices[0].message
    if message.tool_calls:
        assert message.tool_calls[0].function.name == "get_weather"
    else:
        assert message.content.startswith("<tool_call>\n<function=get_weather>\n")


def test_cancel_by_disconnect_and_by_delete(server):
    before = server.metric("tern:request_success_total")
    with httpx.stream("POST", server.url + "/v1/chat/completions", timeout=60,
                      json={"model": MODEL, "messages": HELLO, "max_tokens": 500, "stream": True}) as r:
        lines = r.iter_lines()
        for _ in range(6):
            next(lines, None)  # a reply that ends sooner is freed all the same
    # The server notices at its next write and frees the sequence.
    for _ in range(100):
        if server.metric("tern:num_requests_running") == 0:
            break
        time.sleep(0.05)
    assert server.metric("tern:num_requests_running") == 0
    # The tiny model may sample an end token and finish before the DELETE lands (404, a reply that ended
    # by itself); such a request proves nothing about cancelling, so ask again.
    for attempt in range(5):
        with httpx.stream("POST", server.url + "/v1/chat/completions", timeout=60,
                          json={"model": MODEL, "messages": HELLO, "max_tokens": 500, "stream": True}) as r:
            lines = r.iter_lines()
            first = json.loads(next(l for l in lines if l.startswith("data: "))[6:])
            deleted = httpx.delete(server.url + f"/v1/requests/{first['id']}").status_code
            rest = [l for l in lines if l.startswith("data: ")]
        assert rest[-1] == "data: [DONE]"
        last = json.loads(rest[-2][6:])
        if deleted == 404:
            assert last["choices"][0]["finish_reason"] in ("stop", "length")
            continue
        assert deleted == 200
        break
    assert last["choices"][0]["finish_reason"] == "abort"
    assert httpx.delete(server.url + f"/v1/requests/{first['id']}").status_code == 404
    assert server.metric("tern:request_success_total") >= before + 2


def post(server, body, path="/v1/chat/completions", **kw):
    return httpx.post(server.url + path, content=body if isinstance(body, (str, bytes)) else json.dumps(body), **kw)


@pytest.mark.parametrize("body,status,param", [
    ("{not json", 400, None),
    ("[1, 2]", 400, None),
    ({"model": MODEL, "messages": HELLO, "temperature": "hot"}, 400, "temperature"),
    ({"model": MODEL, "messages": HELLO, "max_tokens": "ten"}, 400, "max_tokens"),
    ({"model": MODEL, "messages": "hi"}, 400, "messages"),
    ({"model": MODEL, "messages": []}, 400, "messages"),
    ({"model": MODEL, "messages": [{"role": "wizard", "content": "x"}]}, 400, "messages[0].role"),
    ({"model": MODEL, "messages": [{"role": "user"}]}, 400, "messages[0].content"),
    ({"model": "gpt-4", "messages": HELLO}, 404, "model"),
    ({"messages": HELLO}, 400, "model"),
    ({"model": MODEL, "messages": HELLO, "max_tokens": 10 ** 12}, 400, "max_tokens"),
    ({"model": MODEL, "messages": HELLO, "max_tokens": 0}, 400, "max_tokens"),
    ({"model": MODEL, "messages": HELLO, "n": 100}, 400, "n"),
    ({"model": MODEL, "messages": HELLO, "top_p": 3}, 400, "top_p"),
    ({"model": MODEL, "messages": HELLO, "response_format": {"type": "json_object"}}, 400, "response_format"),
    ({"model": MODEL, "messages": HELLO, "tool_choice": {"type": "function", "function": {"name": "nope"}},
      "tools": TOOLS}, 400, "tool_choice"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "word " * 2000}]}, 400, "messages"),
    # Before: the template's conversion of a body nested 20,000 deep overflowed the stack and the server
    # died; a number past a double was a 500; ignore_eos was dropped without a word.
    ('{"model": "%s", "messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": {"x": %s}}'
     % (MODEL, "[" * 20000 + "]" * 20000), 400, None),
    ('{"model": "%s", "messages": [{"role": "user", "content": "hi"}], "temperature": 1e400}' % MODEL, 400, None),
    ({"model": MODEL, "messages": HELLO, "ignore_eos": True}, 400, "ignore_eos"),
])
def test_bad_chat_input(server, body, status, param):
    r = post(server, body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["message"] and error["type"]
    if param:
        assert error["param"] == param
    assert httpx.get(server.url + "/health").status_code == 200


@pytest.mark.parametrize("body,status,param", [
    ({"model": MODEL}, 400, "prompt"),
    ({"model": MODEL, "prompt": [1, -5]}, 400, "prompt"),
    ({"model": MODEL, "prompt": [5000]}, 400, "prompt"),
    ({"model": MODEL, "prompt": "x", "logprobs": 99}, 400, "logprobs"),
    ({"model": MODEL, "prompt": list(range(10, 1100))}, 400, "prompt"),
    ({"model": MODEL, "prompt": "hi", "max_tokens": 1020}, 400, "max_tokens"),
])
def test_bad_completion_input(server, body, status, param):
    r = post(server, body, "/v1/completions")
    assert r.status_code == status, r.text
    assert r.json()["error"]["param"] == param


def test_oversized_body_is_413(server):
    r = post(server, {"model": MODEL, "messages": [{"role": "user", "content": "x" * 100000}]})
    assert r.status_code == 413
    assert r.json()["error"]["message"]
    assert httpx.get(server.url + "/health").status_code == 200


def test_api_key():
    s = Server("--api-key", "sekrit", "--parallel", "2", "--ctx-size", "256")
    try:
        bad = openai.OpenAI(base_url=s.url + "/v1", api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            bad.models.list()
        good = openai.OpenAI(base_url=s.url + "/v1", api_key="sekrit", max_retries=0)
        assert good.models.list().data[0].id == MODEL
        assert httpx.get(s.url + "/health").status_code == 200
    finally:
        assert s.stop() == 0


def test_prefix_cache_serves_repeats_and_aba(server, client):
    def run(text):
        r = client.completions.create(model=MODEL, prompt=text, max_tokens=8, temperature=0)
        return r.choices[0].text, r.model_extra["timings"]

    a = "alpha " * 75
    b = "beta " * 75
    cold_text, cold = run(a)
    assert cold["cache_n"] == 0
    repeat_text, repeat = run(a)
    assert repeat_text == cold_text and repeat["cache_n"] == repeat["prompt_n"] + repeat["cache_n"]
    run(b)
    aba_text, aba = run(a)
    assert aba_text == cold_text and aba["prompt_n"] == 0
    assert repeat["prompt_ms"] <= 0.1 * cold["prompt_ms"]
    assert aba["prompt_ms"] <= 0.1 * cold["prompt_ms"]
    assert server.metric("tern:prefix_cache_hits_total") > 0
    print(f"\nPREFIX cold {cold['prompt_ms']:.1f} ms ({cold['prompt_n']} tokens), repeat {repeat['prompt_ms']:.2f} ms, "
          f"A/B/A {aba['prompt_ms']:.2f} ms")


def test_metrics_names(server):
    text = httpx.get(server.url + "/metrics").text
    for name in ("tern:num_requests_running", "tern:num_requests_waiting", "tern:kv_cache_usage_perc",
                 "tern:prompt_tokens_total", "tern:generation_tokens_total", "tern:time_to_first_token_seconds_bucket",
                 "tern:inter_token_latency_seconds_count", "tern:prefix_cache_queries_total",
                 "tern:prefix_cache_hits_total", "tern:num_preemptions_total"):
        assert name in text


def kv_mib(server):
    server.log.flush()
    with open(server.log.name) as f:
        for line in f:
            if "sequences:" in line:
                return line, float(line.split("KV): ")[1].split(" MiB")[0])
    raise AssertionError("no sequences line in the server log")


def test_q8_kv_cache_on_the_cpu_backend():
    # The 8-bit cache and the cpu backend's kernels (attention included) with a pool of two threads.
    args = ("--parallel", "2", "--ctx-size", "512", "--cache-mb", "0")
    q8 = Server("--kv-type", "q8", "--backend", "cpu", "--threads", "2", *args)
    try:
        client = openai.OpenAI(base_url=q8.url + "/v1", api_key="none", max_retries=0, timeout=120)
        r = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=8, temperature=0)
        assert r.choices[0].finish_reason in ("stop", "length") and r.usage.completion_tokens > 0
        line, q8_mib = kv_mib(q8)
        assert "(q8 KV)" in line
    finally:
        assert q8.stop() == 0
    with open(q8.log.name) as f:
        assert "backend cpu, 2 thread(s)" in f.read()
    f16 = Server(*args)
    try:
        _, f16_mib = kv_mib(f16)
    finally:
        assert f16.stop() == 0
    assert q8_mib < f16_mib  # the state also holds the (fp32) GDN layers, so not quite half


def test_tokenize_names_a_wrong_type(server):
    # Before: a 500 "type must be boolean".
    r = httpx.post(server.url + "/tokenize", json={"content": "hi", "add_special": "yes"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "add_special"

"""A complete tool call through generation and the output parser. The tiny model's random weights never
write the closing tags themselves, so the request continues an assistant reply that stops after
</function> (continue_final_message) and steers the next token with logit_bias: the sampled token
closes the call, and the server's parser turns the reply into OpenAI tool_calls, in a message and in
stream deltas. (A forced token cannot also end the turn, so finish_reason here is "length".)"""
import json

import httpx

from conftest import MODEL

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                             "parameters": {"type": "object",
                                                            "properties": {"city": {"type": "string"},
                                                                           "days": {"type": "integer"}}}}}]
ASK = [{"role": "user", "content": "What is the weather in Paris for the next 3 days?"}]
CALL_BODY = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n" \
            "<parameter=days>\n3\n</parameter>\n</function>"
CONTINUE = {"continue_final_message": True, "add_generation_prompt": False}


def token_id(server, text):
    ids = httpx.post(server.url + "/tokenize", json={"content": text}).json()["tokens"]
    assert len(ids) == 1, (text, ids)
    return ids[0]


def request(server, reply, bias, max_tokens=1):
    body = {"model": MODEL, "messages": ASK + [{"role": "assistant", "content": reply}], "tools": TOOLS,
            "temperature": 0, "max_tokens": max_tokens, "logit_bias": {str(bias): 100},
            **CONTINUE}
    return httpx.post(server.url + "/v1/chat/completions", json=body, timeout=60)


def check_call(call):
    assert set(call) == {"id", "type", "function"}, call  # the message form has no index
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "get_weather"
    # Arguments are a JSON object as text, typed by the tool's schema.
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "days": 3}


def test_generated_token_closes_the_call(server, client):
    close = token_id(server, "</tool_call>")
    r = request(server, CALL_BODY, close)
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    assert choice["message"]["content"] is None  # the continued text is not sent again
    assert len(choice["message"]["tool_calls"]) == 1
    check_call(choice["message"]["tool_calls"][0])
    assert choice["finish_reason"] == "length"  # max_tokens 1: the closing tag was the only token
    assert r.json()["usage"]["completion_tokens"] == 1

    # The same through the openai client: typed objects.
    message = client.chat.completions.create(
        model=MODEL, messages=ASK + [{"role": "assistant", "content": CALL_BODY}], tools=TOOLS, temperature=0,
        max_tokens=1, logit_bias={str(close): 100}, extra_body=CONTINUE).choices[0].message
    assert message.tool_calls[0].function.name == "get_weather"
    assert json.loads(message.tool_calls[0].function.arguments) == {"city": "Paris", "days": 3}


def test_streamed_tool_call_delta(server):
    close = token_id(server, "</tool_call>")
    with httpx.stream("POST", server.url + "/v1/chat/completions", timeout=60,
                      json={"model": MODEL, "messages": ASK + [{"role": "assistant", "content": CALL_BODY}],
                            "tools": TOOLS, "temperature": 0, "max_tokens": 1, "stream": True,
                            "logit_bias": {str(close): 100}, **CONTINUE}) as r:
        lines = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"].get("role") == "assistant"
    deltas = [tc for c in chunks for choice in c["choices"] for tc in choice["delta"].get("tool_calls", [])]
    assert len(deltas) == 1
    # A streamed call carries its index; tern sends each call whole, in one delta.
    delta = deltas[0]
    assert delta["index"] == 0
    check_call({k: v for k, v in delta.items() if k != "index"})
    assert not any(choice["delta"].get("content") for c in chunks for choice in c["choices"])
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_continue_final_message_needs_an_assistant_reply(server):
    r = httpx.post(server.url + "/v1/chat/completions",
                   json={"model": MODEL, "messages": ASK, **CONTINUE})
    assert r.status_code == 400 and r.json()["error"]["param"] == "continue_final_message"
    r = httpx.post(server.url + "/v1/chat/completions",
                   json={"model": MODEL, "messages": ASK + [{"role": "assistant", "content": "Sure"}],
                         "continue_final_message": True, "add_generation_prompt": True})
    assert r.status_code == 400
    r = httpx.post(server.url + "/v1/chat/completions",
                   json={"model": MODEL, "messages": ASK, "logit_bias": {"99999999": 5}})
    assert r.status_code == 400 and r.json()["error"]["param"] == "logit_bias"
    r = httpx.post(server.url + "/v1/chat/completions",
                   json={"model": MODEL, "messages": ASK, "logit_bias": {"5": 500}})
    assert r.status_code == 400 and r.json()["error"]["param"] == "logit_bias"


def test_no_call_where_none_was_asked_for(server):
    """tool_choice none, or no tools at all: a call block the model writes is content. Before, it still came
    back as tool_calls."""
    close = token_id(server, "</tool_call>")
    for tools in ({"tools": TOOLS, "tool_choice": "none"}, {}):
        body = {"model": MODEL, "messages": ASK + [{"role": "assistant", "content": CALL_BODY}], "temperature": 0,
                "max_tokens": 1, "logit_bias": {str(close): 100}, **CONTINUE, **tools}
        r = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=60)
        assert r.status_code == 200, r.text
        message = r.json()["choices"][0]["message"]
        assert not message.get("tool_calls"), (tools, message)
        assert message["content"] == "</tool_call>", (tools, message)

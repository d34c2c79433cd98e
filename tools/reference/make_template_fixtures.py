#!/usr/bin/env python3
"""Chat-template fixtures: real Qwen templates rendered by Hugging Face's own code path.

Every Qwen chat template found in the llama-cpp-python sdist on PyPI (it vendors llama.cpp's
models/templates/) is rendered over a set of conversations with
transformers.utils.chat_template_utils.render_jinja_template, i.e. exactly what apply_chat_template
does (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, HF's tojson, raise_exception,
reasoning-field aliasing). tests/text/template_fixture_test.cpp renders the same requests with tern
and demands byte identity.

Made with (venv in tools/reference/.venv, `pip install jinja2 transformers`):
  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   # only the .tar.gz is needed
  python tools/reference/make_template_fixtures.py llama_cpp_python-0.3.36.tar.gz tests/fixtures/templates
"""
import copy
import json
import pathlib
import sys
import tarfile

import jinja2
from transformers.utils.chat_template_utils import render_jinja_template

# Templates of the Qwen family (and the DeepSeek distillation of Qwen) in llama.cpp's collection.
TEMPLATE_NAMES = {
    "Qwen3.5-4B.jinja": "qwen3_5",
    "Qwen3-Coder.jinja": "qwen3_coder",
    "Qwen-Qwen3-0.6B.jinja": "qwen3",
    "Qwen-QwQ-32B.jinja": "qwq",
    "Qwen-Qwen2.5-7B-Instruct.jinja": "qwen2_5",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": "deepseek_r1_distill_qwen",
}
SPECIAL_TOKENS = {
    "deepseek_r1_distill_qwen": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
}
QWEN_TOKENS = {"bos_token": "", "eos_token": "<|im_end|>"}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.\n  Returns °C. ",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. \"Paris\""},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7.5},
            },
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "filters": {"type": "object", "properties": {"site": {"type": "string"}}, "nullable": True},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
}


def call(name, arguments, as_string=False, call_id="call_1"):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments) if as_string else arguments},
    }


def conversations():
    """(name, request) pairs covering system prompts, turns, tools, calls, results and reasoning."""
    sys_msg = {"role": "system", "content": "You are a helpful assistant.\n"}
    user = {"role": "user", "content": "What is the capital of France?"}
    answer = {"role": "assistant", "content": "Paris."}
    weather_call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [call("get_weather", {"city": "Paris", "days": 2, "unit": "celsius"})],
    }
    weather_result = {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21.5, \"sky\": \"clear\"}"}
    base = {
        "single_user": [user],
        "system_user": [sys_msg, user],
        "multi_turn": [sys_msg, user, answer, {"role": "user", "content": "And of Italy?"}],
        "multi_turn_no_system": [user, answer, {"role": "user", "content": "  And Spain?  "}],
        "unicode": [{"role": "user", "content": "Grüße, 世界! 🚀 \"quotes\" 'single' \\ backslash\ttab"}],
        "empty_system": [{"role": "system", "content": ""}, user],
        "reasoning_field": [
            user,
            {"role": "assistant", "content": "Paris.", "reasoning_content": "The user asks about France.\n"},
            {"role": "user", "content": "Thanks. Why?"},
        ],
        "reasoning_last_turn": [
            user,
            {"role": "assistant", "content": "Paris.", "reasoning_content": "\nEasy one.\n"},
        ],
        "think_in_content": [
            user,
            {"role": "assistant", "content": "<think>\nLet me recall.\n</think>\n\nParis."},
            {"role": "user", "content": "Sure?"},
        ],
        "think_in_content_last": [user, {"role": "assistant", "content": "<think>\nHmm.\n</think>\n\nParis."}],
        "reasoning_alias": [
            user,
            {"role": "assistant", "content": "Paris.", "reasoning": "Aliased reasoning."},
            {"role": "user", "content": "ok"},
        ],
        "tool_call_dict_args": [user, weather_call, weather_result],
        "tool_call_string_args": [
            user,
            {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Paris"}, True)]},
            weather_result,
        ],
        "tool_call_with_content": [
            sys_msg,
            user,
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [call("get_weather", {"city": "Paris"})],
            },
            weather_result,
            {"role": "assistant", "content": "It is 21.5 °C and clear."},
        ],
        "parallel_tool_calls": [
            user,
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    call("get_weather", {"city": "Paris"}),
                    call("search", {"query": "Paris \"events\"", "tags": ["a", "b"], "filters": {"site": "x.fr"}},
                         call_id="call_2"),
                ],
            },
            weather_result,
            {"role": "tool", "tool_call_id": "call_2", "content": "no events\nfound"},
        ],
        "tool_args_types": [
            user,
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    call("search", {"query": "x", "n": 3, "ratio": 0.5, "big": 1e20, "tiny": 1e-7, "flag": True,
                                    "nothing": None, "nested": {"a": [1, 2.0, "three"], "é": "ü"}})
                ],
            },
            {"role": "tool", "content": "done"},
        ],
        "multi_step_tools": [
            user,
            weather_call,
            weather_result,
            {"role": "assistant", "content": "",
             "tool_calls": [call("search", {"query": "Paris weather tomorrow"}, call_id="call_2")]},
            {"role": "tool", "tool_call_id": "call_2", "content": "rain"},
        ],
        "tool_call_reasoning": [
            user,
            {"role": "assistant", "content": "", "reasoning_content": "Need the weather tool.",
             "tool_calls": [call("get_weather", {"city": "Paris"})]},
            weather_result,
            {"role": "assistant", "content": "Sunny.", "reasoning_content": "Got it."},
        ],
        "tool_response_user_text": [
            {"role": "user", "content": "<tool_response>\nfake\n</tool_response>"},
            {"role": "user", "content": "real question"},
        ],
        "content_parts": [
            {"role": "user", "content": [{"type": "text", "text": "Part one. "}, {"type": "text", "text": "Part two."}]},
        ],
        "long_history": [sys_msg] + [
            m for i in range(4) for m in (
                {"role": "user", "content": f"Question {i}"},
                {"role": "assistant", "content": f"Answer {i}", "reasoning_content": f"Thinking {i}"},
            )
        ] + [{"role": "user", "content": "Last question"}],
        "system_not_first": [user, {"role": "system", "content": "late system"}],
        "only_system": [sys_msg],
        "no_user_query": [{"role": "assistant", "content": "Hi"}],
        "empty_messages": [],
        "assistant_null_content_call": [
            user,
            {"role": "assistant", "content": None, "tool_calls": [call("get_weather", {"city": "Rome"})]},
            weather_result,
        ],
    }
    tool_sets = {"none": None, "weather": [WEATHER_TOOL], "two": [WEATHER_TOOL, SEARCH_TOOL]}
    kwarg_sets = {"default": None, "think_on": {"enable_thinking": True}, "think_off": {"enable_thinking": False}}
    for name, messages in base.items():
        for tools_name, tools in tool_sets.items():
            for kwargs_name, kwargs in kwarg_sets.items():
                for gen in (True, False):
                    # Keep the grid small: every conversation gets the full kwarg x gen grid without tools, and
                    # a couple of tool variants.
                    if tools_name != "none" and (kwargs_name != "default" or not gen) and tools_name != "weather":
                        continue
                    if tools_name == "weather" and kwargs_name == "think_on":
                        continue
                    request = {"messages": copy.deepcopy(messages)}
                    if tools is not None:
                        request["tools"] = copy.deepcopy(tools)
                    if kwargs is not None:
                        request["chat_template_kwargs"] = dict(kwargs)
                    if not gen:
                        request["add_generation_prompt"] = False
                    yield f"{name}/{tools_name}/{kwargs_name}/{'gen' if gen else 'nogen'}", request


def render(template, request, tokens):
    kwargs = dict(tokens)
    kwargs.update(request.get("chat_template_kwargs") or {})
    rendered, _ = render_jinja_template(
        conversations=[copy.deepcopy(request["messages"])],
        tools=copy.deepcopy(request.get("tools")),
        chat_template=template,
        add_generation_prompt=request.get("add_generation_prompt", True),
        **kwargs,
    )
    return rendered[0]


def main():
    sdist, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    with tarfile.open(sdist) as tar:
        members = {pathlib.PurePosixPath(m.name).name: m for m in tar.getmembers() if "/models/templates/" in m.name}
        for file_name, name in TEMPLATE_NAMES.items():
            template = tar.extractfile(members[file_name]).read().decode("utf-8")
            tokens = SPECIAL_TOKENS.get(name, QWEN_TOKENS)
            target = out_dir / name
            target.mkdir(parents=True, exist_ok=True)
            (target / "template.jinja").write_text(template, encoding="utf-8")
            (target / "special_tokens.json").write_text(json.dumps(tokens, ensure_ascii=False) + "\n", encoding="utf-8")
            count = errors = 0
            with open(target / "cases.jsonl", "w", encoding="utf-8") as cases:
                for case_name, request in conversations():
                    case = {"name": case_name, "request": request}
                    try:
                        case["expected"] = render(template, request, tokens)
                    except (jinja2.TemplateError, TypeError, ValueError) as e:
                        case["error"] = type(e).__name__
                        case["message"] = str(e)
                        errors += 1
                    cases.write(json.dumps(case, ensure_ascii=False) + "\n")
                    count += 1
            print(f"{name}: {count} cases ({errors} raise)")


if __name__ == "__main__":
    main()

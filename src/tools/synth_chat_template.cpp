// The chat template written into synthetic models. It is tern's own text with the behaviour of the
// Qwen3.5 template (model-spec §7.4): system turn (with a tools block), user turns, assistant turns
// that keep their reasoning only after the last real user query, tool calls in the XML form, tool
// results grouped into one user turn, and a generation prompt that opens the think block.
#include "tools/synth_vocab.h"

namespace tern::tools {

std::string_view builtin_chat_template() {
  static constexpr std::string_view kTemplate = R"jinja({%- macro render_content(content) -%}
{%- if content is string -%}
{{- content -}}
{%- elif content is iterable -%}
{%- for part in content -%}
{%- if part.type == "text" -%}
{{- part.text -}}
{%- else -%}
{{- raise_exception("Only text content is supported, not " + part.type + ".") -}}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(last_query_index=-1) -%}
{%- for message in messages -%}
{%- if message.role == "user" -%}
{%- set text = render_content(message.content) | trim -%}
{%- if not (text.startswith("<tool_response>") and text.endswith("</tool_response>")) -%}
{%- set ns.last_query_index = loop.index0 -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if messages | length > 0 and messages[0].role == "system" -%}
{%- set system_text = render_content(messages[0].content) | trim -%}
{%- else -%}
{%- set system_text = "" -%}
{%- endif -%}
{%- if tools is defined and tools and tools | length > 0 -%}
{{- "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>" -}}
{%- for tool in tools -%}
{{- "\n" + (tool | tojson) -}}
{%- endfor -%}
{{- "\n</tools>\n\nTo call a function, answer with one or more blocks in exactly this form:\n\n<tool_call>\n<function=name_of_the_function>\n<parameter=name_of_a_parameter>\nvalue of the parameter\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\n- Name only functions listed above and give every required parameter.\n- A parameter value may span several lines.\n- Write nothing after the last tool call; you may reason before it.\n</IMPORTANT>" -}}
{%- if system_text -%}
{{- "\n\n" + system_text -}}
{%- endif -%}
{{- "<|im_end|>\n" -}}
{%- elif system_text -%}
{{- "<|im_start|>system\n" + system_text + "<|im_end|>\n" -}}
{%- endif -%}
{%- for message in messages -%}
{%- set content = render_content(message.content) -%}
{%- if message.role == "system" -%}
{%- if not loop.first -%}
{{- raise_exception("A system message is only allowed first.") -}}
{%- endif -%}
{%- elif message.role == "user" -%}
{{- "<|im_start|>user\n" + (content | trim) + "<|im_end|>\n" -}}
{%- elif message.role == "assistant" -%}
{%- set reasoning = "" -%}
{%- if message.reasoning_content is defined and message.reasoning_content is string -%}
{%- set reasoning = message.reasoning_content -%}
{%- elif "</think>" in content -%}
{%- set reasoning = content.split("</think>")[0].split("<think>")[-1] -%}
{%- set content = content.split("</think>")[-1] -%}
{%- endif -%}
{%- set content = content | trim -%}
{%- if loop.index0 > ns.last_query_index -%}
{{- "<|im_start|>assistant\n<think>\n" + (reasoning | trim) + "\n</think>\n\n" + content -}}
{%- else -%}
{{- "<|im_start|>assistant\n" + content -}}
{%- endif -%}
{%- if message.tool_calls is defined and message.tool_calls -%}
{%- for tool_call in message.tool_calls -%}
{%- if loop.first -%}
{%- if content -%}
{{- "\n\n" -}}
{%- endif -%}
{%- else -%}
{{- "\n" -}}
{%- endif -%}
{%- if tool_call.function is defined -%}
{%- set call = tool_call.function -%}
{%- else -%}
{%- set call = tool_call -%}
{%- endif -%}
{{- "<tool_call>\n<function=" + call.name + ">\n" -}}
{%- if call.arguments is defined and call.arguments is mapping -%}
{%- for name, value in call.arguments | items -%}
{{- "<parameter=" + name + ">\n" -}}
{%- if value is string -%}
{{- value -}}
{%- else -%}
{{- value | tojson -}}
{%- endif -%}
{{- "\n</parameter>\n" -}}
{%- endfor -%}
{%- endif -%}
{{- "</function>\n</tool_call>" -}}
{%- endfor -%}
{%- endif -%}
{{- "<|im_end|>\n" -}}
{%- elif message.role == "tool" -%}
{%- if loop.first or messages[loop.index0 - 1].role != "tool" -%}
{{- "<|im_start|>user" -}}
{%- endif -%}
{{- "\n<tool_response>\n" + content + "\n</tool_response>" -}}
{%- if loop.last or messages[loop.index0 + 1].role != "tool" -%}
{{- "<|im_end|>\n" -}}
{%- endif -%}
{%- else -%}
{{- raise_exception("Unknown message role: " + message.role) -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- "<|im_start|>assistant\n" -}}
{%- if enable_thinking is defined and enable_thinking is false -%}
{{- "<think>\n\n</think>\n\n" -}}
{%- else -%}
{{- "<think>\n" -}}
{%- endif -%}
{%- endif -%})jinja";
  return kTemplate;
}

}  // namespace tern::tools

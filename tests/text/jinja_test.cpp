// Engine behaviour the real templates do not reach: load-time refusal of unsupported constructs,
// whitespace control, and Python semantics (expected strings checked with Python jinja2 3.1.6,
// trim_blocks and lstrip_blocks on).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "text/jinja/template.h"

namespace tern::text::jinja {
namespace {

std::string render(const std::string& source, ValueDict variables = {}) {
  return Template(source).render(variables);
}

void expect_load_error(const std::string& source, const std::string& fragment) {
  try {
    Template parsed(source);
    ADD_FAILURE() << "no error for: " << source;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << source;
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(JinjaTemplate, RefusesUnsupportedConstructsAtLoadNamingTheLine) {
  expect_load_error("a\n{% include 'x' %}", "line 2: unsupported tag '{% include %}'");
  expect_load_error("{{ x | wordwrap }}", "line 1: unsupported filter 'wordwrap'");
  expect_load_error("\n\n{{ x is sameas_not }}", "line 3: unsupported test 'sameas_not'");
  expect_load_error("{{ x.append(1) }}", "unsupported method 'append'");
  expect_load_error("{{ lipsum() }}", "unsupported function 'lipsum'");
  expect_load_error("{% for x in y recursive %}{% endfor %}", "unsupported 'recursive' loop");
  expect_load_error("{% raw %}x{% endraw %}", "unsupported tag '{% raw %}'");
  expect_load_error("{% if x %}", "missing '{% endif %}'");
  expect_load_error("{% break %}", "'break' outside a loop");
  expect_load_error("{{ f(*args) }}", "unsupported *args");
}

TEST(JinjaTemplate, WhitespaceControlMatchesJinja2) {
  EXPECT_EQ(render("a\n  {% if true %}\nb{{ 'c' }}\n{% endif %}  \nd\n"), "a\nbc\n  \nd");
  EXPECT_EQ(render("x  {%- if true -%}  y  {%- endif %}"), "xy");
  EXPECT_EQ(render("  {%+ if true %}a{% endif %}"), "  a");
  EXPECT_EQ(render("{% if true +%}\na{% endif %}"), "\na");
  EXPECT_EQ(render("a {{- ' b ' -}} c"), "a b c");
  EXPECT_EQ(render("  {# note #}\nx"), "x");
  EXPECT_EQ(render("a\r\nb\n\n"), "a\nb\n");
}

TEST(JinjaTemplate, PythonValueSemantics) {
  EXPECT_EQ(
      render("{{ 1.0 }} {{ 1e20 }} {{ 0.0001 }} {{ 1/3 }} {{ 7//2 }} {{ -7//2 }} {{ -7 % 3 }} {{ 2**10 }}"),
      "1.0 1e+20 0.0001 0.3333333333333333 3 -4 2 1024");
  EXPECT_EQ(render("{{ [1,'a',none,true,{'k':1.5}] }}"), "[1, 'a', None, True, {'k': 1.5}]");
  EXPECT_EQ(render("{% set x = 'ab' | safe %}{{ x + '<' }}{{ '<' + x }}{{ x ~ '<' }}"), "ab&lt;&lt;abab<");
  EXPECT_EQ(render("{{ 'héllo'[::-1] }}|{{ 'héllo'|length }}|{{ [1,2,3][-2:] }}|{{ 'abcdef'[1:5:2] }}"),
            "olléh|5|[2, 3]|bd");
  EXPECT_EQ(render("{{ ' a b  '.split() }}{{ 'a,b,,c'.split(',', 2) }}{{ 'xxhixx'.strip('x') }}"),
            "['a', 'b']['a', 'b', ',c']hi");
  EXPECT_EQ(render("{{ none or 'x' }}{{ 0 and 1 }}{{ 'b' in 'abc' }}{{ 1 == 1.0 }}{{ 1 < 2 < 3 }}"),
            "x0TrueTrueTrue");
  EXPECT_EQ(render("{{ {'b': 1, 'a': [1.5, 'é\"']} | tojson }}|{{ {'a': {}} | tojson(indent=2) }}"),
            "{\"b\": 1, \"a\": [1.5, \"é\\\"\"]}|{\n  \"a\": {}\n}");
  EXPECT_EQ(
      render("{{ u|default('d') }}{{ ''|default('e', true) }}{{ u is defined }}{{ u|length }}{{ 'a' in u }}"),
      "deFalse0False");
}

TEST(JinjaTemplate, ScopesLoopsMacrosAndNamespaces) {
  EXPECT_EQ(render("{% for x in [1,2] %}{% if loop.first %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}"),
            "[5][]");
  EXPECT_EQ(
      render("{% set ns = namespace(n=0) %}{% for x in 'abc' %}{% set ns.n = ns.n + loop.index %}{% endfor %}"
             "{{ ns.n }}"),
      "6");
  EXPECT_EQ(
      render("{% for x in [1,2,3,4] if x is even %}{{ loop.index }}/{{ loop.length }}:{{ x }} {% else %}none"
             "{% endfor %}{% for x in [] %}{% else %}empty{% endfor %}"),
      "1/2:2 2/2:4 empty");
  EXPECT_EQ(render("{% for x in [1,2,3] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}"
                   "{% endif %}{{ x }}{% endfor %}"),
            "1");
  EXPECT_EQ(render("{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(1, b=3) | trim }}"),
            "1-2 1-3");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}{% set c %}block {{ a }}{% endset %}{{ c }}"),
            "21block 1");
  EXPECT_THROW(render("{{ raise_exception('boom') }}"), Error);
  EXPECT_THROW(render("{{ u.x }}"), Error);
  EXPECT_THROW(render("{{ 'a' + 1 }}"), Error);
}

TEST(JinjaTemplate, BoundsHostileTemplates) {
  expect_load_error("{{ " + std::string(1000, '(') + "1" + std::string(1000, ')') + " }}",
                    "nesting deeper than");
  EXPECT_THROW(render("{{ 'x' * 1000000000000 }}"), Error);
  EXPECT_THROW(render("{{ 3 ** 100 }}"), Error);
  EXPECT_EQ(render("{{ 1 ** 1000000000000000 }} {{ 2 ** 62 }} {{ (-2) ** 63 }}"),
            "1 4611686018427387904 -9223372036854775808");
  EXPECT_THROW(render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), Error);
}

}  // namespace
}  // namespace tern::text::jinja

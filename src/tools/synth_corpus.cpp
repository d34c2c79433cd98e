// The text the built-in tokenizer's merges are trained on: written for tern, a mix of English prose,
// chat turns, code and a few other languages, so common words, indentation and UTF-8 runs all merge.
#include "tools/synth_vocab.h"

namespace tern::tools {

std::string_view builtin_corpus() {
  static constexpr std::string_view kCorpus = R"corpus(
The quick brown fox jumps over the lazy dog. The dog does not mind; it has seen the fox before.
A language model reads a sequence of tokens and predicts the next one. It is trained on a great
deal of text, and then it is asked to answer questions, write programs and explain what it knows.
When the model is small, the answers are short and often wrong. When the model is large, the
answers are longer, and they are right more often than not. That is the whole story, more or less.

What is the capital of France? The capital of France is Paris. What is the capital of Germany?
The capital of Germany is Berlin. What is the capital of Japan? The capital of Japan is Tokyo.
How many days are there in a week? There are seven days in a week. How many hours are in a day?
There are twenty-four hours in a day, sixty minutes in an hour and sixty seconds in a minute.

I'd like to know whether it's going to rain today. You'll need an umbrella if you're going out;
they've said the weather will change in the afternoon, and we're not sure when it'll stop.

User: Can you help me write a function that adds two numbers?
Assistant: Of course. Here is a small function in Python that returns the sum of its arguments.

def add(a, b):
    """Return the sum of a and b."""
    return a + b


def mean(values):
    if not values:
        raise ValueError("mean of an empty list")
    total = 0.0
    for value in values:
        total += value
    return total / len(values)


class Counter:
    def __init__(self):
        self.counts = {}

    def add(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]

#include <cstdint>
#include <string>
#include <vector>

// Returns the number of bytes in the string that are not spaces.
int count_non_spaces(const std::string& text) {
  int count = 0;
  for (const char c : text) {
    if (c != ' ') {
      ++count;
    }
  }
  return count;
}

struct Point {
  float x = 0.0f;
  float y = 0.0f;
};

std::vector<Point> make_points(int n) {
  std::vector<Point> points;
  points.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    points.push_back({static_cast<float>(i), static_cast<float>(i * i)});
  }
  return points;
}

{"name": "get_weather", "description": "Get the current weather for a city.",
 "parameters": {"type": "object", "properties": {"city": {"type": "string"},
 "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}
{"role": "user", "content": "What is the weather in Paris?"}
{"role": "assistant", "content": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
{"role": "tool", "content": "{\"temperature\": 18, \"unit\": \"celsius\"}"}

Let me think about this step by step. First, we need the total number of apples: 12 + 7 = 19.
Then we share them between 4 friends: 19 / 4 = 4.75, so each friend gets 4 apples and 3 remain.
The answer is 4 apples each, with 3 left over. Let me check: 4 * 4 + 3 = 19. Yes, that is right.

In 1969, the first people walked on the Moon. In 2024, there were more than 8,000,000,000 people
on Earth. The number 3.14159 is close to pi, and 2.71828 is close to e.

Le renard brun rapide saute par-dessus le chien paresseux. Où est la gare, s'il vous plaît ?
Je voudrais un café et un croissant. Merci beaucoup, et bonne journée à vous !
Der schnelle braune Fuchs springt über den faulen Hund. Wie spät ist es? Es ist schon zehn Uhr.
Ich möchte gern ein Glas Wasser. Die Straße ist lang, und die Brücke über den Fluss ist alt.
El rápido zorro marrón salta sobre el perro perezoso. ¿Dónde está la biblioteca? Está allí.
Mañana vamos a la playa con mis amigos. ¡Qué día tan bonito para caminar junto al mar!
O rápido cão castanho. Obrigado pela ajuda; não sei o que faria sem você.
Быстрая коричневая лиса прыгает через ленивую собаку. Спасибо, до свидания!
Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο. Καλημέρα σας.
敏捷的棕色狐狸跳过了懒狗。今天天气很好，我们去公园散步吧。你好，世界！
素早い茶色の狐がのろまな犬を飛び越える。今日はいい天気ですね。ありがとうございます。
빠른 갈색 여우가 게으른 개를 뛰어넘습니다. 안녕하세요, 만나서 반갑습니다.
सूरज पूरब में उगता है। नमस्ते, आप कैसे हैं?
الثعلب البني السريع يقفز فوق الكلب الكسول. شكرا جزيلا.
Emoji appear in chats too: 👍 🙂 🚀 ✅ — and so do symbols like €, £, ¥, ©, ° and ±.

<think>
The user asks for the capital of Italy. That is Rome. I should answer briefly.
</think>

The capital of Italy is Rome.

Thank you for your question. If you have any other questions, feel free to ask. I am happy to help
with programming, mathematics, writing, translation and many other tasks.
)corpus";
  return kCorpus;
}

}  // namespace tern::tools

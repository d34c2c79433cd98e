// Encode throughput on the tokenizer fixture corpus (tools/reference/make_tokenizer_fixtures.py), single
// thread; tools/reference/bench_hf_tokenizer.py measures HF tokenizers on the same corpus.
#include <benchmark/benchmark.h>

#include <optional>

#include "tests/text/tokenizer_fixtures.h"
#include "text/tokenizer.h"

namespace {

// warm_cache: the word cache is kept across iterations (as HF keeps its BPE cache); otherwise every
// iteration starts from a fresh tokenizer.
void BM_TokenizerEncodeCorpus(benchmark::State& state, const std::string& vocab_name, bool warm_cache) {
  const std::string dir = tern::test::tokenizer_fixture_dir() + "/" + vocab_name;
  const std::string config = tern::test::read_text_file(dir + "/tokenizer_config.json");
  const auto corpus = tern::test::read_corpus();
  size_t bytes = 0;
  for (const auto& s : corpus) bytes += s.size();
  const tern::text::Vocab vocab =
      tern::text::import_hf_tokenizer(tern::test::read_gzip_file(dir + "/tokenizer.json.gz"), &config);
  std::optional<tern::text::Tokenizer> tokenizer(std::in_place, vocab);
  for (auto _ : state) {
    if (!warm_cache) {
      state.PauseTiming();
      tokenizer.emplace(vocab);
      state.ResumeTiming();
    }
    size_t tokens = 0;
    for (const auto& s : corpus) tokens += tokenizer->encode(s).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

BENCHMARK_CAPTURE(BM_TokenizerEncodeCorpus, qwen3_6_warm, std::string("qwen3_6"), true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TokenizerEncodeCorpus, qwen3_6_cold, std::string("qwen3_6"), false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_TokenizerEncodeCorpus, qwen_warm, std::string("qwen"), true)
    ->Unit(benchmark::kMillisecond);

}  // namespace

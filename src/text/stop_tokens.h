// The tokens that end a generation (model-spec §11.6): the file's eos id, <|im_end|>, <|endoftext|>, and
// the tokens llama.cpp also treats as end-of-generation for this family (<|fim_pad|>, <|repo_name|>,
// <|file_sep|>) when the vocabulary has them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/vocab.h"

namespace tern::text {

inline constexpr std::string_view kEndOfGenerationTexts[] = {"<|im_end|>", "<|endoftext|>", "<|fim_pad|>",
                                                             "<|repo_name|>", "<|file_sep|>"};

// Sorted, unique ids.
std::vector<int32_t> end_of_generation_ids(const Vocab& vocab);

}  // namespace tern::text

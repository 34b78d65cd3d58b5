#pragma once
// The files compiled into the binary (traceview/embed_files.cmake): the trace view's page under
// "assets/" (web/assets) and the recipes under "recipes/" (docs/recipes). Immutable; thread-safe.

#include <string_view>
#include <vector>

namespace sparktrace::traceview {

struct EmbeddedFile {
  std::string_view name;     // "assets/app.js", "recipes/troubleshoot/resource-wait-long.md"
  std::string_view content;  // the file's bytes
};

const std::vector<EmbeddedFile>& EmbeddedFiles();

// The file of that name, or nullptr.
const EmbeddedFile* FindEmbeddedFile(std::string_view name);

}  // namespace sparktrace::traceview

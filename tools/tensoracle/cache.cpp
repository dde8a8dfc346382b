// tensoracle cache list | info KEY | verify | prune [--max-size S] | clear   [--dir DIR] [--json]
//
// Inspects and maintains the engine cache (docs/cache.md). Exit status: 0 ok, 1 verify found bad
// entries, 2 bad usage or an unreadable cache.
#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command.h"
#include "core/counted.h"
#include "io/strict_json.h"
#include "tensoracle/byte_size.h"
#include "tensoracle/cache.h"

namespace tensoracle::cli {
namespace {

using nlohmann::json;

struct CacheArgs {
  std::string directory;
  bool json = false;
  std::string key;
  std::string max_size;
};


CacheStore store_for(const CacheArgs& args) {
  CacheOptions options;
  options.directory = args.directory;
  return CacheStore(options);
}

void print_json(const json& value) { print_result(value.dump(2) + "\n"); }

std::string iso_time(int64_t unix_ns) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

json entry_json(const CacheEntryInfo& entry) {
  return json{{"key", entry.key},
              {"engine_name", entry.engine_name},
              {"bytes", entry.engine_bytes + entry.manifest_bytes},
              {"engine_bytes", entry.engine_bytes},
              {"manifest_bytes", entry.manifest_bytes},
              {"last_used", iso_time(entry.last_used_unix_ns)}};
}

void run_list(const CacheArgs& args) {
  const CacheStore store = store_for(args);
  const auto entries = value_or_fail(store.list());
  uint64_t total = 0;
  for (const auto& entry : entries) total += entry.engine_bytes + entry.manifest_bytes;
  if (args.json) {
    json list = json::array();
    for (const auto& entry : entries) list.push_back(entry_json(entry));
    print_json(json{{"directory", store.directory()}, {"entries", list}, {"total_bytes", total},
                    {"max_size_bytes", store.max_size_bytes()}});
    return;
  }
  std::string text = fmt::format("cache {}: {}, {} (limit {})\n", store.directory(), counted(entries.size(), "engine"),
                                 format_byte_size(total), store.max_size_bytes() ? format_byte_size(store.max_size_bytes()) : "none");
  if (!entries.empty()) text += fmt::format("{:<16}  {:<24}  {:>10}  {}\n", "KEY", "ENGINE", "SIZE", "LAST USED");
  for (const auto& entry : entries)
    text += fmt::format("{:<16}  {:<24}  {:>10}  {}\n", entry.key.substr(0, 16), entry.engine_name,
                        format_byte_size(entry.engine_bytes + entry.manifest_bytes), iso_time(entry.last_used_unix_ns));
  print_result(text);
}

void run_info(const CacheArgs& args) {
  const CacheStore store = store_for(args);
  const CacheEntryInfo entry = value_or_fail(store.info(args.key));
  if (args.json) {
    json out = entry_json(entry);
    out["engine_path"] = store.directory() + "/" + entry.key + ".engine";
    auto manifest = parse_strict_json(entry.manifest_json, "the manifest of cache entry " + entry.key);
    out["manifest"] = manifest.is_ok() ? *std::move(manifest) : json();
    print_json(out);
    return;
  }
  print_result(fmt::format("key:       {}\nengine:    {}\npath:      {}/{}.engine\nsize:      {} ({} engine + {} manifest)\n"
                           "last used: {}\nmanifest:\n{}",
                           entry.key, entry.engine_name, store.directory(), entry.key,
                           format_byte_size(entry.engine_bytes + entry.manifest_bytes), format_byte_size(entry.engine_bytes),
                           format_byte_size(entry.manifest_bytes), iso_time(entry.last_used_unix_ns), entry.manifest_json));
}

void run_verify(const CacheArgs& args) {
  const CacheStore store = store_for(args);
  const size_t checked = value_or_fail(store.list()).size();
  const auto problems = value_or_fail(store.verify());
  if (args.json) {
    json list = json::array();
    for (const auto& problem : problems) list.push_back(json{{"key", problem.key}, {"reason", problem.reason}});
    print_json(json{{"directory", store.directory()}, {"checked", checked}, {"ok", problems.empty()}, {"problems", list}});
  } else {
    std::string text;
    for (const auto& problem : problems) text += fmt::format("BAD {}: {}\n", problem.key.substr(0, 16), problem.reason);
    text += fmt::format("{} checked in {}: {}\n", counted(checked, "engine"), store.directory(),
                        problems.empty() ? "all good" : counted(problems.size(), "problem"));
    print_result(text);
  }
  throw CommandExit{problems.empty() ? kExitOk : kExitCheckFailed};
}

void report_prune(const CacheArgs& args, const CacheStore& store, const CachePruneResult& result) {
  if (args.json) {
    print_json(json{{"directory", store.directory()},
                    {"removed", result.removed_keys},
                    {"skipped_in_use", result.skipped_keys},
                    {"bytes_freed", result.bytes_freed},
                    {"bytes_left", result.bytes_left}});
    return;
  }
  std::string text = fmt::format("removed {} ({}); {} left in {}\n", counted(result.removed_keys.size(), "engine"),
                                 format_byte_size(result.bytes_freed), format_byte_size(result.bytes_left), store.directory());
  for (const auto& key : result.skipped_keys) text += fmt::format("kept {}: in use by another process\n", key.substr(0, 16));
  print_result(text);
}

void run_prune(const CacheArgs& args) {
  const CacheStore store = store_for(args);
  const uint64_t limit = args.max_size.empty() ? store.max_size_bytes() : value_or_fail(parse_byte_size(args.max_size));
  report_prune(args, store, value_or_fail(store.prune(limit)));
}

void run_clear(const CacheArgs& args) {
  const CacheStore store = store_for(args);
  report_prune(args, store, value_or_fail(store.clear()));
}

void add_common(CLI::App* cmd, CacheArgs& args) {
  cmd->add_option("--dir", args.directory,
                  "Cache directory (default: $TENSORACLE_CACHE_DIR, else $XDG_CACHE_HOME/tensoracle, else "
                  "~/.cache/tensoracle)");
  cmd->add_flag("--json", args.json, "Print JSON");
}

void add_cache_command(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cache = app.add_subcommand("cache", "Inspect and maintain the engine cache");
  cache->require_subcommand(1);

  CLI::App* list = cache->add_subcommand(
      "list", "List cached engines, most recently used first; SIZE (and the total) counts each engine file and its "
              "key manifest, as cache info and the size limit do");
  add_common(list, *args);
  list->callback([args] { run_list(*args); });

  CLI::App* info = cache->add_subcommand(
      "info", "Show one entry and its key manifest; its size is the engine file plus the manifest, as in cache list");
  info->add_option("KEY", args->key, "The key, or a unique prefix of it")->required();
  add_common(info, *args);
  info->callback([args] { run_info(*args); });

  CLI::App* verify = cache->add_subcommand(
      "verify", "Re-check every entry (checksum, structure, manifest vs engine vs key); exit 1 when any is bad");
  add_common(verify, *args);
  verify->callback([args] { run_verify(*args); });

  CLI::App* prune = cache->add_subcommand(
      "prune", "Evict least-recently-used engines down to a size, and remove leftovers of interrupted builds");
  prune->add_option("--max-size", args->max_size,
                    "Size to prune to, e.g. 10G (default: $TENSORACLE_CACHE_MAX_SIZE, else 20G)");
  add_common(prune, *args);
  prune->callback([args] { run_prune(*args); });

  CLI::App* clear = cache->add_subcommand("clear", "Remove every cached engine (entries in use are kept)");
  add_common(clear, *args);
  clear->callback([args] { run_clear(*args); });
}

}  // namespace

const CommandRegistration kCache{"cache", 50, &add_cache_command};

}  // namespace tensoracle::cli

// The plot: bars are medians, a black bar-wide line is that configuration's
// roofline (bandwidth for decode, sgemm for prefill) and the label above is
// the fraction of it reached, so differing thread counts stay comparable.
#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "llama/error.hpp"

extern char** environ;

namespace llama::bench {
namespace {

using nlohmann::json;

std::string quoted(const std::string& s) {  // a gnuplot single-quoted string
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

struct Series {
  std::string title;
  std::string section;   // "decode", "decode_at_depth" or "prefill"
  std::string fraction;  // the fraction field in that section
  std::string backend;
  int threads = 0;
  int color = 1;  // one per backend x threads; the depth series adds a pattern
};

// One panel: a data block per series ("x median roofline fraction" lines)
// and the plot command drawing bars, roofline marks and labels.
void panel(std::ostringstream& s, const json& report, const std::vector<Series>& series,
           const std::vector<std::string>& models, const std::string& title, int& block) {
  const double width = 0.8 / static_cast<double>(series.size());
  std::string plot = "plot ";
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& se = series[i];
    const std::string name = "$b" + std::to_string(block++);
    s << name << " << EOD\n";
    for (const json& r : report["results"]) {
      if (r["status"] != "ok" || r["backend"] != se.backend || r["threads"] != se.threads ||
          r[se.section].is_null()) {
        continue;
      }
      const auto m = std::find(models.begin(), models.end(), r["model"]["name"].get<std::string>());
      const double x =
          static_cast<double>(m - models.begin()) +
          (static_cast<double>(i) - (static_cast<double>(series.size()) - 1) / 2) * width;
      const json& sec = r[se.section];
      s << x << " " << sec["tok_per_s"]["median"].get<double>() << " "
        << sec["roofline_tok_per_s"].get<double>() << " " << sec[se.fraction].get<double>() << "\n";
    }
    s << "EOD\n";
    const std::string w = std::to_string(width);
    plot += (i ? ", " : "") + name + " using 1:2:(" + w + ") with boxes lc " +
            std::to_string(se.color) + (se.section == "decode_at_depth" ? " fs pattern 4" : "") +
            " title " + quoted(se.title) + ", " + name + " using ($1-" + w + "/2):3:(" + w +
            "):(0) with vectors nohead lw 2 lc rgb 'black' notitle, " + name +
            " using 1:2:(sprintf('%.2f', $4)) with labels offset 0,0.8 font ',8' notitle";
  }
  s << "set title " << quoted(title) << "\n" << plot << "\n";
}

// The --parallel panel: aggregate decode tokens/s against the sequence count, a
// line per model x backend x threads (nothing when no result has --parallel figures).
void parallel_panel(std::ostringstream& s, const json& report, int& block) {
  std::string plot = "plot ";
  int lines = 0;
  for (const json& r : report["results"]) {
    if (r["status"] != "ok" || !r.value("parallel", json()).is_array()) continue;
    const std::string name = "$b" + std::to_string(block++);
    s << name << " << EOD\n";
    for (const json& e : r["parallel"]) {
      if (e["status"] != "ok") continue;
      s << e["sequences"].get<int64_t>() << " " << e["decode_tok_per_s"]["median"].get<double>()
        << "\n";
    }
    s << "EOD\n";
    const std::string title = r["model"]["name"].get<std::string>() + " " +
                              r["backend"].get<std::string>() + " j" +
                              std::to_string(r["threads"].get<int>());
    plot +=
        (lines++ ? ", " : "") + name + " using 1:2 with linespoints lw 2 title " + quoted(title);
  }
  if (lines == 0) return;
  s << "set title 'Many sequences (--parallel): aggregate decode tokens/s'\n"
    << "set xlabel 'sequences'\nunset xtics\nset xtics auto\nset logscale x 2\n"
    << "set autoscale x\nset xrange [*:*]\n"
    << plot << "\n";
}

bool has_parallel(const json& report) {
  for (const json& r : report["results"])
    if (r.value("parallel", json()).is_array()) return true;
  return false;
}

}  // namespace

std::string plot_script(const json& report, const std::string& png_path) {
  std::vector<std::string> models;
  std::vector<std::pair<std::string, int>> configs;
  for (const json& r : report["results"]) {
    const std::string m = r["model"]["name"].get<std::string>();
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
    const std::pair<std::string, int> c{r["backend"].get<std::string>(), r["threads"].get<int>()};
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  const json& st = report["settings"];
  const std::string tg = "tg" + std::to_string(st["decode_tokens"].get<int64_t>());
  const std::string pp = "pp" + std::to_string(st["prompt_tokens"].get<int64_t>());
  const int64_t depth = st["depth"].get<int64_t>();
  std::vector<Series> decode, prefill;
  int color = 0;
  for (const auto& [backend, threads] : configs) {
    ++color;
    const std::string label = backend + " j" + std::to_string(threads);
    decode.push_back({label + " " + tg, "decode", "bandwidth_fraction", backend, threads, color});
    if (depth > 0) {
      decode.push_back({label + " " + tg + "@d" + std::to_string(depth), "decode_at_depth",
                        "bandwidth_fraction", backend, threads, color});
    }
    prefill.push_back({label + " " + pp, "prefill", "sgemm_fraction", backend, threads, color});
  }

  std::ostringstream s;
  s << "set terminal pngcairo size 1400,600 font 'sans,10' noenhanced\n"
    << "set output " << quoted(png_path) << "\n"
    << "set multiplot layout 1," << (has_parallel(report) ? 3 : 2) << " title "
    << quoted(
           "llama-bench: median tokens/s (bars), "
           "roofline (black line), fraction reached "
           "(label)")
    << "\n"
    << "set style fill solid 0.75 border -1\n"
    << "set logscale y\nset grid ytics mytics\nset ylabel 'tokens/s'\n"
    << "set key top right font ',9'\nset autoscale yfix\nset offsets 0, 0, graph 0.12, graph 0.3\n"
    << "set xrange [-0.6:" << static_cast<double>(models.size()) - 0.4 << "]\n"
    << "set xtics (";
  for (size_t i = 0; i < models.size(); ++i) s << (i ? ", " : "") << quoted(models[i]) << " " << i;
  s << ")\n";
  int block = 0;
  panel(s, report, decode, models,
        "Decode (" + tg + "): roofline = read bandwidth / bytes per token", block);
  panel(s, report, prefill, models,
        "Prefill (" + pp + "): roofline = sgemm FLOP/s / (2 x matmul parameters)", block);
  parallel_panel(s, report, block);
  s << "unset multiplot\n";
  return s.str();
}

void require_gnuplot() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : dir) / "gnuplot";
    if (::access(p.c_str(), X_OK) == 0) return;
  }
  throw Error("--plot: gnuplot not found on PATH (Debian package gnuplot-nox)");
}

void write_plot(const json& report, const std::string& png_path) {
  require_gnuplot();
  const std::string script_path = png_path + ".gp";
  {
    std::ofstream out(script_path, std::ios::trunc);
    out << plot_script(report, png_path);
    if (!out.good()) throw Error(script_path + ": cannot write the gnuplot script");
  }
  std::vector<std::string> args{"gnuplot", script_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ);
  if (rc != 0) throw Error(std::string("--plot: cannot run gnuplot: ") + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::error_code ec;
  std::filesystem::remove(script_path, ec);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error(png_path + ": gnuplot failed to draw the plot");
  }
  if (!std::filesystem::exists(png_path, ec)) throw Error(png_path + ": gnuplot wrote no file");
}

}  // namespace llama::bench

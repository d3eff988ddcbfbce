#include "model/output_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <stdio.h>  // renameat2
#include <signal.h>  // kill(pid, 0): is the owner of a temporary alive?
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <vector>

#include "model/error.h"

namespace fs = std::filesystem;

namespace dtr {

namespace {

std::atomic<bool> g_discard{false};  // DiscardOutputFiles()

std::string Reason(int err) { return std::error_code(err, std::generic_category()).message(); }

// `path` without a trailing separator, so that parent_path()/filename() name
// the entry itself ("out/" -> "out").
fs::path Entry(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.has_filename()) return p;
  return p.parent_path();
}

// Removes the temporaries ".NAME.tmp-PID-..." beside `target` whose process
// is gone (killed by SIGKILL, SIGTERM or Ctrl-C before it could clean up):
// no process PID exists on this machine. Best effort: a failure to list or
// remove is ignored (the new temporary has a fresh name anyway).
void RemoveStaleTemps(const fs::path& target) {
  const std::string prefix = fmt::format(".{}.tmp-", target.filename().string());
  fs::path dir = target.parent_path();
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec);
  if (ec) return;
  std::vector<fs::path> stale;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return;
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t digits = name.find_first_not_of("0123456789", prefix.size());
    if (digits == prefix.size() || digits == std::string::npos || name[digits] != '-') continue;
    if (digits - prefix.size() > 9) continue;  // no pid_t
    const pid_t pid = static_cast<pid_t>(std::stol(name.substr(prefix.size(), digits - prefix.size())));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(it->path());
  }
  for (const fs::path& p : stale) fs::remove_all(p, ec);
}

// A fresh name ".NAME.tmp-PID-N" beside `target`; `create` makes it and
// returns 0 or an errno. Retries on EEXIST (a leftover of a killed run).
template <typename Create>
std::string MakeTemp(const fs::path& target, Create create) {
  static std::atomic<unsigned> counter{0};
  RemoveStaleTemps(target);
  fs::path dir = target.parent_path();
  for (int attempt = 0;; ++attempt) {
    auto tick = std::chrono::steady_clock::now().time_since_epoch().count();
    std::string name = fmt::format(".{}.tmp-{}-{}-{:x}", target.filename().string(), ::getpid(), counter++,
                                   static_cast<unsigned>(tick) & 0xffffu);
    std::string temp = (dir / name).string();
    int err = create(temp);
    if (err == 0) return temp;
    if (err != EEXIST || attempt == 100) throw InputError(fmt::format("{}: cannot write ({})", target.string(), Reason(err)));
  }
}

int SyncFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

PendingFile::PendingFile(const std::string& path) : path_(path) {
  fs::path target = Entry(path);
  if (target.empty()) throw InputError(fmt::format("'{}': not a file name", path));
  std::error_code ec;
  // Refused before any work: rename would fail on it only at the end.
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("{}: cannot open for writing ({})", path, Reason(EISDIR)));
  const fs::file_status status = fs::status(path, ec);
  if (!ec && fs::exists(status) && !fs::is_regular_file(status)) {
    // Renaming over /dev/null would replace the device with a file. A
    // process whose outputs are discarded writes nothing there.
    temp_ = g_discard ? "/dev/null" : path;
    in_place_ = true;
    return;
  }
  temp_ = MakeTemp(target, [](const std::string& temp) {
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
  });
}

PendingFile::~PendingFile() {
  if (!committed_ && !in_place_) ::unlink(temp_.c_str());
}

void DiscardOutputFiles() { g_discard = true; }

bool OutputFilesDiscarded() { return g_discard; }

void PendingFile::Commit() {
  if (committed_ || g_discard) return;  // discarded: the destructor removes the temporary
  if (in_place_) {
    committed_ = true;
    return;
  }
  int err = SyncFile(temp_);
  if (err == 0 && ::rename(temp_.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0) throw InputError(fmt::format("{}: cannot write ({})", path_, Reason(err)));
  committed_ = true;
}

void WriteFileAtomically(const std::string& path, std::string_view text) {
  PendingFile file(path);
  int fd = ::open(file.temp_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot write ({})", path, Reason(errno)));
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw InputError(fmt::format("{}: cannot write ({})", path, Reason(err)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw InputError(fmt::format("{}: cannot write ({})", path, Reason(errno)));
  file.Commit();
}

void CheckDirectoryTarget(const std::string& dir) {
  fs::path target = Entry(dir);
  if (target.empty()) throw InputError(fmt::format("'{}': not a directory name", dir));
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec))
    throw InputError(fmt::format("{}: cannot create the directory (a file of that name exists)", dir));
}

PendingDirectory::PendingDirectory(const std::string& dir) : dir_(dir) {
  CheckDirectoryTarget(dir);
  fs::path target = Entry(dir);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the directory ({})", dir, ec.message()));
  temp_ = MakeTemp(target, [](const std::string& temp) { return ::mkdir(temp.c_str(), 0777) == 0 ? 0 : errno; });
}

PendingDirectory::~PendingDirectory() {
  std::error_code ec;
  if (!committed_) fs::remove_all(temp_, ec);
}

std::string PendingDirectory::Write(const std::string& name, std::string_view text) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw InputError(fmt::format("'{}': not a file name", name));
  // The temporary directory is private until Commit: plain writes suffice,
  // but WriteFileAtomically also reports every failure with its reason.
  WriteFileAtomically((fs::path(temp_) / name).string(), text);
  return (fs::path(dir_) / name).string();
}

void PendingDirectory::Commit() {
  if (committed_ || g_discard) return;  // discarded: the destructor removes the temporary
  fs::path target = Entry(dir_);
  std::error_code ec;
  if (!fs::exists(target, ec)) {
    if (::rename(temp_.c_str(), target.c_str()) != 0)
      throw InputError(fmt::format("{}: cannot create the directory ({})", dir_, Reason(errno)));
    committed_ = true;
    return;
  }
  if (!fs::is_directory(target, ec))
    throw InputError(fmt::format("{}: cannot create the directory (a file of that name exists)", dir_));
  std::set<std::string> ours;
  for (const fs::directory_entry& e : fs::directory_iterator(temp_)) ours.insert(e.path().filename().string());
  for (const fs::directory_entry& e : fs::directory_iterator(target, ec)) {
    std::string name = e.path().filename().string();
    std::error_code kind_ec;
    if (ours.count(name) && e.is_directory(kind_ec))  // not an earlier version of our file
      throw InputError(fmt::format("{}: cannot open for writing ({})", (fs::path(dir_) / name).string(),
                                   Reason(EISDIR)));
    if (!ours.count(name))
      throw InputError(fmt::format("{}: holds '{}', which the new files would not replace; give a new or empty directory, "
                              "or one holding only an earlier version of them",
                              dir_, name));
  }
  if (ec) throw InputError(fmt::format("{}: cannot read the directory ({})", dir_, ec.message()));
  // Swap both names in one step; the old set then sits under the temporary
  // name and is removed by the destructor.
  if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(temp_, ec);
    committed_ = true;
    return;
  }
  if (errno != EINVAL && errno != ENOSYS)
    throw InputError(fmt::format("{}: cannot replace the directory ({})", dir_, Reason(errno)));
  // No exchange on this file system: move the old set aside, then the new one in.
  std::string old = MakeTemp(target, [](const std::string&) { return 0; });
  if (::rename(target.c_str(), old.c_str()) != 0)
    throw InputError(fmt::format("{}: cannot replace the directory ({})", dir_, Reason(errno)));
  if (::rename(temp_.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::rename(old.c_str(), target.c_str());
    throw InputError(fmt::format("{}: cannot replace the directory ({})", dir_, Reason(err)));
  }
  fs::remove_all(old, ec);
  committed_ = true;
}

}  // namespace dtr

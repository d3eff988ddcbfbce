#include "model/file_lock.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <utility>


namespace dtr {

FileLock::~FileLock() { Release(); }

namespace {

// Opens `path`, creating it if missing, and locks it exclusively: 0 with the
// descriptor in *fd, or an errno (EWOULDBLOCK: held elsewhere, `wait` false).
int OpenLocked(const std::string& path, bool wait, int* fd) {
  *fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (*fd < 0) return errno;
  while (::flock(*fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(*fd);
    *fd = -1;
    return err;
  }
  return 0;
}

}  // namespace

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), remove_(std::move(other.remove_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    remove_ = std::move(other.remove_);
  }
  return *this;
}

int FileLock::TryLock(const std::string& path) {
  Release();
  return OpenLocked(path, false, &fd_);
}

int FileLock::LockTransient(const std::string& path) {
  Release();
  while (true) {
    int fd = -1;
    if (int err = OpenLocked(path, true, &fd)) return err;
    // The holder before us may have removed the file while we waited: our
    // lock is then on a file no one else will open. Ours only if `path`
    // still names the file locked.
    struct stat locked, named;
    if (::fstat(fd, &locked) == 0 && ::stat(path.c_str(), &named) == 0 &&
        locked.st_dev == named.st_dev && locked.st_ino == named.st_ino) {
      fd_ = fd;
      remove_ = path;
      return 0;
    }
    ::close(fd);
  }
}

void FileLock::Release() {
  if (fd_ < 0) return;
  // Removed while still locked: a waiter then finds its file gone and retries.
  if (!remove_.empty()) ::unlink(remove_.c_str());
  ::close(fd_);  // closing the only descriptor of the description releases the flock
  fd_ = -1;
  remove_.clear();
}

int LockHolder(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters' lines carry "->".
  const std::string device = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev),
                                         static_cast<unsigned long long>(st.st_ino));
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string number, kind, mode, access, dev;
    long pid = 0;
    if (!(in >> number >> kind) || kind == "->" || kind != "FLOCK") continue;
    if (!(in >> mode >> access >> pid >> dev)) continue;
    if (dev == device && pid > 0) return static_cast<int>(pid);
  }
  return 0;
}

}  // namespace dtr

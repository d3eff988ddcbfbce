// Advisory locks on files, held while a process writes what the file guards:
// a checkpoint (checker/persist/checkpoint_journal.h) for a whole run, a certificate
// store file (diagnose/certificate_store.h), through a lock file beside it,
// while it is re-read, merged and replaced.
//
// The lock is flock(2) on an open file description of its own: other
// descriptors of the same file in this process may be opened and closed
// freely (unlike fcntl locks, which any close releases), two FileLocks on
// one file conflict even inside one process, and the kernel releases the
// lock when its holder dies, so a killed run never blocks the next one.
#pragma once

#include <string>

namespace dtr {

class FileLock {
 public:
  FileLock() = default;
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Opens `path` (creating it empty, mode 0666 before the umask, if it does
  // not exist) and locks it exclusively without waiting. Returns 0, or
  // EWOULDBLOCK if another open file holds the lock, or the errno of the
  // failed open or flock. The file stays when the lock is released.
  int TryLock(const std::string& path);
  // Waits for an exclusive lock on the lock file `path`, which exists only
  // while a lock on it is held: created if missing, removed on Release().
  // (A waiter that wakes up on a removed file tries again on the new one.)
  // Returns 0 or the errno of the failed open or flock.
  int LockTransient(const std::string& path);
  bool held() const { return fd_ >= 0; }
  void Release();

 private:
  int fd_ = -1;
  std::string remove_;  // LockTransient: the lock file, removed on Release()
};

// The id of a process holding a flock on `path`, read from /proc/locks; 0
// when it cannot be told (no /proc, no such lock).
int LockHolder(const std::string& path);

}  // namespace dtr

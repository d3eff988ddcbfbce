// Output files that appear whole or not at all (docs/output_files.md).
//
// Every file dtrcheck writes on request (a generated trace, an eviction
// script, a decision log, a report) is written under a temporary name in the
// directory it will live in and renamed into place once complete. A process
// killed mid-write therefore leaves the old file (or none) under the final
// name, never a prefix of the new one; the temporary is a hidden
// ".NAME.tmp-..." entry beside it. A write that fails removes its temporary
// and leaves the final name untouched.
//
// A report is a set of files: PendingDirectory builds the whole set in a
// temporary directory beside the target and swaps it in with one rename, so
// the target directory holds the old set or the new one, never a mix.
#pragma once

#include <string>
#include <string_view>

namespace dtr {

// A file being written under a temporary name beside `path`. Write to
// temp_path() (with any API), close it, then Commit(). Destroyed without a
// successful Commit(), it removes the temporary. A `path` that exists and is
// no regular file or directory (/dev/null, /dev/stdout, a FIFO) has no old
// content to keep and must not be replaced: temp_path() is `path` itself.
class PendingFile {
 public:
  // Creates the empty temporary. Throws Error "PATH: cannot write (REASON)".
  explicit PendingFile(const std::string& path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  // Flushes the temporary to disk and renames it to path(), replacing any
  // file there. Throws Error "PATH: cannot write (REASON)"; the temporary is
  // then removed by the destructor.
  void Commit();

 private:
  std::string path_, temp_;
  bool committed_ = false;
  bool in_place_ = false;  // temp_ is path_ (a device or a FIFO)
};

// From now on, every Commit() of this process discards its temporary instead
// of publishing it. For the ranks of an MPI job other than rank 0, which run
// the same command (cli/main.cc): one process writes each output.
void DiscardOutputFiles();
// Whether DiscardOutputFiles() was called: writers that do not go through
// PendingFile (the certificate store's merge) skip their work then.
bool OutputFilesDiscarded();

// Writes `text` to `path` through a PendingFile. Throws Error naming the path
// and the reason; on failure `path` is as it was.
void WriteFileAtomically(const std::string& path, std::string_view text);

// Throws what PendingDirectory(dir) would for a name that is not a
// directory's or an existing file in its place; creates nothing. For a
// command that announces its work before doing it (report).
void CheckDirectoryTarget(const std::string& dir);

// A directory whose files are written into a temporary directory beside
// `dir` and published together. If `dir` exists when committing, it must be
// a directory holding nothing but entries the new set also has (an earlier
// version of the same set); it is then replaced as a whole.
class PendingDirectory {
 public:
  // Creates the parent directories and the empty temporary directory.
  // Throws Error "DIR: cannot create the directory (REASON)".
  explicit PendingDirectory(const std::string& dir);
  ~PendingDirectory();
  PendingDirectory(const PendingDirectory&) = delete;
  PendingDirectory& operator=(const PendingDirectory&) = delete;

  const std::string& dir() const { return dir_; }
  // Writes one file of the set (name without directories) into the
  // temporary directory; returns the path it will have once committed.
  std::string Write(const std::string& name, std::string_view text);
  // Swaps the temporary directory in as `dir`. Throws Error if `dir` holds
  // something the new set does not (naming it), or if a rename fails; `dir`
  // is then untouched.
  void Commit();

 private:
  std::string dir_, temp_;
  bool committed_ = false;
};

}  // namespace dtr

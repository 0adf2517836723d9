#pragma once
// The stage of one plan (both profiles): a fresh private folder the plugin
// writes its files into, reached and removed only through descriptors.
// Internal to core.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/result.h"
#include "dot/base/sha256.h"
#include "dot/core/error_kinds.h"
#include "dot/core/root.h"
#include "dot/store/root.h"

namespace dot::core {

// A fresh, empty stage directory (0700) for one plan, removed on every path.
// Everything goes by descriptor: the stage folder DIR/.dot/stage is opened
// beneath the state folder (a symlink there is DOT_E_PATH_ESCAPE naming it,
// so nothing is ever created in or removed from where it points), the plan's
// directory is made and opened beneath that, and the cleanup removes through
// the stage folder's descriptor (beneath::remove_tree), never by path.
class Stage {
 public:
  static Result<Stage> create(const store::OpenedRoot& dirs, store::TxnId txn) {
    Stage s;
    DOT_ASSIGN_OR_RETURN(s.parent_fd_, dirs.open_folder_entry(store::kStageName));
    DOT_ASSIGN_OR_RETURN(std::string rnd, random_hex32());
    s.name_ = fmt::format("{}-{}", txn, rnd.substr(0, 16));
    s.path_ = fmt::format("{}/{}", dirs.layout.stage_dir, s.name_);
    if (::mkdirat(s.parent_fd_.get(), s.name_.c_str(), 0700) != 0) return beneath::errno_error(errno, "mkdir", s.path_);
    s.owned_ = true;
    DOT_ASSIGN_OR_RETURN(s.fd_, beneath::open_beneath(s.parent_fd_.get(), s.name_, O_RDONLY | O_DIRECTORY));
    struct stat st {};
    if (::fstat(s.fd_.get(), &st) != 0) return beneath::errno_error(errno, "stat", s.path_);
    s.dev_ = st.st_dev;
    s.ino_ = st.st_ino;
    return s;
  }
  Stage() = default;
  Stage(Stage&& o) noexcept
      : parent_fd_(std::move(o.parent_fd_)),
        name_(std::move(o.name_)),
        path_(std::move(o.path_)),
        fd_(std::move(o.fd_)),
        dev_(o.dev_),
        ino_(o.ino_),
        owned_(std::exchange(o.owned_, false)) {}
  Stage& operator=(Stage&&) = delete;
  // The fallback: make_plan removes the stage itself (remove()) once the
  // plugin is dead and reports a failure; whatever is left then, `recover`
  // removes and reports.
  // remove() allocates (names, errors): running out of memory here leaves
  // the stage to `recover` rather than throwing out of a destructor.
  ~Stage() {
    try {
      (void)remove();
    } catch (...) {  // nothing more can be done in a destructor
    }
  }

  // Removes this plan's stage completely, whatever its depth (remove_tree
  // walks without recursion, never following a link), and everything else
  // in the stage folder: the root lock is held, so all of it is this plan's
  // (an audit plugin may litter next to its own stage). Only once: later
  // calls do nothing. Errors: remove_tree's, for the first entry that could
  // not be removed (the others are still tried).
  Status remove() {
    if (!owned_) return {};
    owned_ = false;
    fd_.reset();
    Status first;
    auto keep = [&](Status s) {
      if (!s.ok() && first.ok()) first = std::move(s);
    };
    auto gone = beneath::remove_tree(parent_fd_.get(), name_);
    if (!gone.ok()) keep(std::move(gone).error());
    auto litter = beneath::list_entries(parent_fd_.get());
    if (!litter.ok()) {
      keep(std::move(litter).error());
      return first;
    }
    for (const auto& n : *litter) {
      auto removed = beneath::remove_tree(parent_fd_.get(), n);
      if (!removed.ok()) keep(std::move(removed).error());
    }
    return first;
  }
  // Where the plugin is told to write (its working directory and the
  // materialize request); core itself only uses the descriptors.
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }

  // The name still holds the directory we made (not a symlink, not a new one).
  Status check_unchanged() const {
    struct stat st {};
    if (::fstatat(parent_fd_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_dev != dev_ || st.st_ino != ino_)
      return make_error(core::ErrorKind::StageReplaced,
                        fmt::format("the stage directory {} was replaced during materialize", path_));
    return {};
  }

 private:
  UniqueFd parent_fd_;  // DIR/.dot/stage
  std::string name_;    // this plan's directory in it
  std::string path_;
  UniqueFd fd_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool owned_ = false;
};

}  // namespace dot::core

// Which files the dynamic loader opens for an executable, read from the ELF
// itself: PT_INTERP for the interpreter, PT_DYNAMIC for DT_NEEDED, DT_RPATH
// and DT_RUNPATH. The bytes come from an untrusted executable, so every
// offset and size is checked against the file before it is used, and every
// count is capped.

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/sandbox.h"

namespace dot {
namespace {

#if defined(__x86_64__)
constexpr Elf64_Half kMachine = EM_X86_64;
constexpr const char* kMultiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr Elf64_Half kMachine = EM_AARCH64;
constexpr const char* kMultiarch = "aarch64-linux-gnu";
#else
#error "process containment knows the ELF machine of x86_64 and aarch64 only"
#endif

// Caps that no sane executable reaches; past them the file is refused.
constexpr std::size_t kMaxProgramHeaders = 512;
constexpr std::size_t kMaxDynamicEntries = 4096;
constexpr std::size_t kMaxNeeded = 256;
constexpr std::size_t kMaxString = 4096;
constexpr std::size_t kMaxObjects = 128;

Error elf_error(std::string detail) { return make_error(base::ErrorKind::Elf, std::move(detail)); }

bool read_exact(const ElfReadAt& read_at, std::uint64_t offset, std::size_t length, void* out) {
  return read_at(offset, length, static_cast<char*>(out)) == static_cast<long>(length);
}

struct Load {
  std::uint64_t vaddr, memsz, offset, filesz;
};

// File offset of a virtual address inside one PT_LOAD's file-backed part.
bool vaddr_to_offset(const std::vector<Load>& loads, std::uint64_t vaddr, std::uint64_t* offset, std::uint64_t* avail) {
  for (const auto& l : loads) {
    if (vaddr >= l.vaddr && vaddr - l.vaddr < l.filesz) {
      *offset = l.offset + (vaddr - l.vaddr);
      *avail = l.filesz - (vaddr - l.vaddr);
      return true;
    }
  }
  return false;
}

Result<std::string> read_c_string(const ElfReadAt& read_at, std::uint64_t offset, std::uint64_t limit,
                                  const char* what) {
  std::size_t cap = static_cast<std::size_t>(std::min<std::uint64_t>(limit, kMaxString));
  std::string s(cap, '\0');
  long n = cap == 0 ? 0 : read_at(offset, cap, s.data());
  if (n <= 0) return elf_error(fmt::format("{} string at offset {} is outside the file", what, offset));
  s.resize(static_cast<std::size_t>(n));
  auto nul = s.find('\0');
  if (nul == std::string::npos) return elf_error(fmt::format("{} string at offset {} is not terminated", what, offset));
  s.resize(nul);
  return s;
}

void split_path_list(const std::string& list, std::vector<std::string>& out) {
  std::size_t start = 0;
  while (start <= list.size()) {
    auto colon = list.find(':', start);
    if (colon == std::string::npos) colon = list.size();
    if (colon > start) out.push_back(list.substr(start, colon - start));
    start = colon + 1;
  }
}

// What the program headers say: the loaded segments (to map DT_STRTAB's
// address to a file offset) and the one PT_DYNAMIC, if any; PT_INTERP goes
// into the result directly.
struct ProgramHeaders {
  std::vector<Load> loads;
  std::optional<Elf64_Phdr> dynamic;
};

Result<ProgramHeaders> read_program_headers(const ElfReadAt& read_at, ElfDynamicInfo& info) {
  Elf64_Ehdr eh;
  if (!read_exact(read_at, 0, sizeof eh, &eh)) return elf_error("shorter than an ELF header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return elf_error("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return elf_error("not a 64-bit little-endian ELF file");
  if (eh.e_machine != kMachine) return elf_error(fmt::format("ELF machine {} is not this machine's", eh.e_machine));
  info.is_elf_executable = eh.e_type == ET_EXEC || eh.e_type == ET_DYN;
  if (!info.is_elf_executable) return elf_error(fmt::format("ELF type {} is not loadable", eh.e_type));
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return elf_error("unexpected program header size");
  if (eh.e_phnum == 0 || eh.e_phnum > kMaxProgramHeaders)
    return elf_error(fmt::format("{} program headers", eh.e_phnum));

  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!read_exact(read_at, eh.e_phoff, ph.size() * sizeof(Elf64_Phdr), ph.data()))
    return elf_error("program headers lie outside the file");
  ProgramHeaders out;
  for (const auto& p : ph) {
    if (p.p_type == PT_LOAD) {
      if (p.p_filesz > p.p_memsz) return elf_error("PT_LOAD with file size above memory size");
      out.loads.push_back({p.p_vaddr, p.p_memsz, p.p_offset, p.p_filesz});
    } else if (p.p_type == PT_INTERP) {
      if (!info.interpreter.empty()) return elf_error("more than one PT_INTERP");
      if (p.p_filesz < 2 || p.p_filesz > PATH_MAX) return elf_error("PT_INTERP of impossible size");
      DOT_ASSIGN_OR_RETURN(info.interpreter, read_c_string(read_at, p.p_offset, p.p_filesz, "PT_INTERP"));
      if (info.interpreter.empty() || info.interpreter[0] != '/')
        return elf_error(fmt::format("interpreter \"{}\" is not an absolute path", info.interpreter));
    } else if (p.p_type == PT_DYNAMIC) {
      if (out.dynamic) return elf_error("more than one PT_DYNAMIC");
      out.dynamic = p;
    }
  }
  return out;
}

// The entries of PT_DYNAMIC that name strings, up to DT_NULL: where the
// string table is and the indexes of the names in it.
struct DynamicStrings {
  std::uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  std::vector<std::uint64_t> needed, rpath, runpath;
};

Result<DynamicStrings> read_dynamic_strings(const ElfReadAt& read_at, const Elf64_Phdr& dynamic) {
  std::size_t count = static_cast<std::size_t>(dynamic.p_filesz / sizeof(Elf64_Dyn));
  if (count > kMaxDynamicEntries) return elf_error("PT_DYNAMIC too large");
  std::vector<Elf64_Dyn> dyn(count);
  if (count > 0 && !read_exact(read_at, dynamic.p_offset, count * sizeof(Elf64_Dyn), dyn.data()))
    return elf_error("PT_DYNAMIC lies outside the file");
  DynamicStrings out;
  for (const auto& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_STRTAB:
        out.strtab = d.d_un.d_ptr;
        out.have_strtab = true;
        break;
      case DT_STRSZ:
        out.strsz = d.d_un.d_val;
        break;
      case DT_NEEDED:
        if (out.needed.size() == kMaxNeeded) return elf_error("too many DT_NEEDED entries");
        out.needed.push_back(d.d_un.d_val);
        break;
      case DT_RPATH:
        out.rpath.push_back(d.d_un.d_val);
        break;
      case DT_RUNPATH:
        out.runpath.push_back(d.d_un.d_val);
        break;
      default:
        break;
    }
  }
  return out;
}

// The names DT_NEEDED, DT_RPATH and DT_RUNPATH point at, read from the
// string table through the loaded segments.
Status read_names(const ElfReadAt& read_at, const std::vector<Load>& loads, const DynamicStrings& d,
                  ElfDynamicInfo& info) {
  if (!d.have_strtab) return elf_error("DT_NEEDED without DT_STRTAB");
  std::uint64_t str_off = 0, str_avail = 0;
  if (!vaddr_to_offset(loads, d.strtab, &str_off, &str_avail))
    return elf_error("DT_STRTAB does not point into a loaded segment");
  if (d.strsz != 0) str_avail = std::min(str_avail, d.strsz);

  auto string_at = [&](std::uint64_t index, const char* what) -> Result<std::string> {
    if (index >= str_avail) return elf_error(fmt::format("{} string index {} outside DT_STRTAB", what, index));
    return read_c_string(read_at, str_off + index, str_avail - index, what);
  };
  for (auto idx : d.needed) {
    DOT_ASSIGN_OR_RETURN(std::string name, string_at(idx, "DT_NEEDED"));
    if (name.empty()) return elf_error("empty DT_NEEDED name");
    info.needed.push_back(std::move(name));
  }
  for (auto idx : d.rpath) {
    DOT_ASSIGN_OR_RETURN(std::string list, string_at(idx, "DT_RPATH"));
    split_path_list(list, info.rpath);
  }
  for (auto idx : d.runpath) {
    DOT_ASSIGN_OR_RETURN(std::string list, string_at(idx, "DT_RUNPATH"));
    split_path_list(list, info.runpath);
  }
  return {};
}

}  // namespace

Result<ElfDynamicInfo> read_elf_dynamic_info(const ElfReadAt& read_at) {
  ElfDynamicInfo info;
  DOT_ASSIGN_OR_RETURN(ProgramHeaders ph, read_program_headers(read_at, info));
  if (!ph.dynamic) return info;  // statically linked: nothing to load
  DOT_ASSIGN_OR_RETURN(DynamicStrings strings, read_dynamic_strings(read_at, *ph.dynamic));
  if (strings.needed.empty() && strings.rpath.empty() && strings.runpath.empty()) return info;
  DOT_TRY(read_names(read_at, ph.loads, strings, info));
  return info;
}

namespace {

ElfReadAt fd_reader(int fd) {
  return [fd](std::uint64_t offset, std::size_t length, char* out) -> long {
    std::size_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -1;
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return static_cast<long>(done);
  };
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Substitutes $ORIGIN / ${ORIGIN}; any other dynamic string token makes the
// entry unusable for us (nullopt): the loader expands $LIB and $PLATFORM in
// ways we do not reproduce, so such an entry is skipped and a library only
// found there stays unresolved (the plugin then fails to start, closed).
std::optional<std::string> expand_origin(const std::string& entry, const std::string& origin) {
  std::string out;
  for (std::size_t i = 0; i < entry.size();) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    if (entry.compare(i, 7, "$ORIGIN") == 0 &&
        (i + 7 == entry.size() || !std::isalnum(static_cast<unsigned char>(entry[i + 7])))) {
      out += origin;
      i += 7;
    } else if (entry.compare(i, 9, "${ORIGIN}") == 0) {
      out += origin;
      i += 9;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// The directories a non-setuid glibc loader falls back to after the cache,
// ld.so.conf's Debian entries first.
std::vector<std::string> system_library_dirs() {
  std::string ma = kMultiarch;
  return {"/usr/local/lib/" + ma, "/usr/local/lib", "/lib/" + ma, "/usr/lib/" + ma, "/lib64",
          "/usr/lib64",           "/lib",           "/usr/lib"};
}

// A regular file that exists at `path`, opened (one system call for a miss,
// which is most candidates), and its identity to recognise it under another name.
struct Found {
  std::string path;
  UniqueFd fd;
  dev_t dev = 0;
  ino_t ino = 0;
};
std::optional<Found> existing_regular_file(const std::string& path) {
  Found f;
  f.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!f.fd) return std::nullopt;
  struct stat st;
  if (::fstat(f.fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  f.path = path;
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  return f;
}

}  // namespace

Result<LoaderFiles> resolve_loader_files(int fd, const std::string& path) {
  DOT_ASSIGN_OR_RETURN(ElfDynamicInfo exe, read_elf_dynamic_info(fd_reader(fd)));
  LoaderFiles files;
  if (exe.interpreter.empty()) return files;  // static: the kernel maps it alone
  auto interp = existing_regular_file(exe.interpreter);
  if (!interp) return elf_error(fmt::format("interpreter {} of {} does not exist", exe.interpreter, path));
  files.interpreter = interp->path;
  if (auto cache = existing_regular_file("/etc/ld.so.cache")) files.loader_cache = cache->path;

  // DT_RPATH of the executable applies to every object loaded for it, unless
  // the executable has DT_RUNPATH (then RPATH is ignored everywhere).
  std::string exe_origin = directory_of(path);
  std::vector<std::string> exe_rpath;
  if (exe.runpath.empty())
    for (const auto& e : exe.rpath)
      if (auto x = expand_origin(e, exe_origin)) exe_rpath.push_back(*x);
  const auto sys_dirs = system_library_dirs();

  struct Pending {
    std::string name;
    std::vector<std::string> own_rpath, runpath;  // already expanded
  };
  std::deque<Pending> queue;
  auto enqueue_needed = [&](const ElfDynamicInfo& obj, const std::string& origin) {
    std::vector<std::string> own_rpath, runpath;
    if (obj.runpath.empty())
      for (const auto& e : obj.rpath)
        if (auto x = expand_origin(e, origin)) own_rpath.push_back(*x);
    for (const auto& e : obj.runpath)
      if (auto x = expand_origin(e, origin)) runpath.push_back(*x);
    for (const auto& n : obj.needed) queue.push_back({n, own_rpath, runpath});
  };
  enqueue_needed(exe, exe_origin);

  std::set<std::string> seen_names;
  std::set<std::pair<dev_t, ino_t>> seen_files;
  seen_files.insert({interp->dev, interp->ino});  // the interpreter satisfies its own soname
  while (!queue.empty()) {
    Pending p = std::move(queue.front());
    queue.pop_front();
    if (!seen_names.insert(p.name).second) continue;
    std::optional<Found> found;
    if (p.name.find('/') != std::string::npos) {
      // A path in DT_NEEDED is opened as is (relative to the plugin's working
      // directory, the stage); only absolute ones can be granted.
      if (p.name[0] == '/') found = existing_regular_file(p.name);
    } else {
      std::vector<std::string> dirs = p.own_rpath;
      dirs.insert(dirs.end(), exe_rpath.begin(), exe_rpath.end());
      dirs.insert(dirs.end(), p.runpath.begin(), p.runpath.end());
      dirs.insert(dirs.end(), sys_dirs.begin(), sys_dirs.end());
      for (const auto& d : dirs) {
        if ((found = existing_regular_file(d + "/" + p.name))) break;
      }
    }
    if (!found) {
      files.unresolved.push_back(p.name);
      continue;
    }
    if (!seen_files.insert({found->dev, found->ino}).second) continue;
    if (seen_files.size() > kMaxObjects)
      return elf_error(fmt::format("{} needs more than {} shared objects", path, kMaxObjects));
    files.libraries.push_back(found->path);
    auto info = read_elf_dynamic_info(fd_reader(found->fd.get()));
    if (!info.ok()) return elf_error(fmt::format("{} (needed by {}): {}", found->path, path, info.error().detail));
    enqueue_needed(*info, directory_of(found->path));
  }
  return files;
}

}  // namespace dot

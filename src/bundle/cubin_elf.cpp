#include "bundle/cubin_elf.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/errors.h"

namespace tensoracle::bundle {
namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

bool libelf_ready() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

// The ELF header fields we rely on, read by hand before libelf sees the bytes so that the common
// failures ("this is not a cubin at all") get precise reasons.
Status check_header(const unsigned char* bytes, size_t size) {
  if (size < EI_NIDENT || std::memcmp(bytes, ELFMAG, SELFMAG) != 0) return corrupt_data("not an ELF file");
  if (bytes[EI_CLASS] != ELFCLASS64) return corrupt_data("not a 64-bit ELF file (class {})", bytes[EI_CLASS]);
  if (bytes[EI_DATA] != ELFDATA2LSB) return corrupt_data("not a little-endian ELF file");
  if (size < sizeof(Elf64_Ehdr)) return corrupt_data("ELF header truncated ({} bytes)", size);
  return Status::ok();
}

// Whether [offset, offset + count * entry_size) lies inside a file of `size` bytes, overflow-safe.
bool table_fits(uint64_t offset, uint64_t count, uint64_t entry_size, uint64_t size) {
  if (offset > size) return false;
  return entry_size == 0 || count <= (size - offset) / entry_size;
}

// A cubin the driver would load has every table and section it declares; libelf alone would
// accept some truncated files because it only reads what is asked for.
Status check_extents(const Elf64_Ehdr& header, uint64_t size) {
  if (!table_fits(header.e_phoff, header.e_phnum, header.e_phentsize, size)) {
    return corrupt_data("program header table ({} entries at offset {}) extends past the end of the file ({} bytes)",
                        header.e_phnum, header.e_phoff, size);
  }
  if (!table_fits(header.e_shoff, header.e_shnum, header.e_shentsize, size)) {
    return corrupt_data("section header table ({} entries at offset {}) extends past the end of the file ({} bytes)",
                        header.e_shnum, header.e_shoff, size);
  }
  return Status::ok();
}

Result<std::vector<std::string>> read_kernels(Elf* elf, uint64_t file_size) {
  std::vector<std::string> kernels;
  size_t section_count = 0;
  if (elf_getshdrnum(elf, &section_count) != 0) return corrupt_data("bad section count: {}", elf_errmsg(-1));
  bool found_symtab = false;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) return corrupt_data("bad section header: {}", elf_errmsg(-1));
    if (header.sh_type != SHT_NOBITS && !table_fits(header.sh_offset, 1, header.sh_size, file_size)) {
      return corrupt_data("section {} ({} bytes at offset {}) extends past the end of the file ({} bytes)",
                          elf_ndxscn(section), header.sh_size, header.sh_offset, file_size);
    }
    if (header.sh_type != SHT_SYMTAB) continue;
    found_symtab = true;
    if (header.sh_entsize == 0) return corrupt_data("symbol table has entry size 0");
    Elf_Data* data = elf_getdata(section, nullptr);
    if (data == nullptr) return corrupt_data("unreadable symbol table: {}", elf_errmsg(-1));
    const size_t count = data->d_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) {
        return corrupt_data("unreadable symbol {}: {}", i, elf_errmsg(-1));
      }
      if (GELF_ST_TYPE(symbol.st_info) != STT_FUNC || (symbol.st_other & kStoCudaEntry) == 0) continue;
      const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
      if (name == nullptr || *name == '\0') return corrupt_data("kernel symbol {} has no readable name", i);
      kernels.emplace_back(name);
    }
  }
  if (!found_symtab) return corrupt_data("no symbol table");
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  return kernels;
}

}  // namespace

Result<int> sm_from_elf_flags(unsigned char abi_version, uint32_t e_flags) {
  switch (abi_version) {
    case kCudaAbiV1: return static_cast<int>(e_flags & 0xffu);
    case kCudaAbiV2: return static_cast<int>((e_flags >> 8) & 0xffu);
    default:
      return corrupt_data("unknown CUDA ELF ABI version {} (known: {} and {})", abi_version, kCudaAbiV1, kCudaAbiV2);
  }
}

Result<CubinInfo> read_cubin(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  TO_RETURN_IF_ERROR(check_header(bytes, size));
  Elf64_Ehdr header;
  std::memcpy(&header, bytes, sizeof(header));
  if (header.e_machine != kElfMachineCuda) {
    return corrupt_data("e_machine is {}, not EM_CUDA ({})", header.e_machine, kElfMachineCuda);
  }
  CubinInfo info;
  info.abi_version = header.e_ident[EI_ABIVERSION];
  info.e_flags = header.e_flags;
  TO_ASSIGN_OR_RETURN(info.sm, sm_from_elf_flags(header.e_ident[EI_ABIVERSION], header.e_flags));
  TO_RETURN_IF_ERROR(check_extents(header, size));

  if (!libelf_ready()) return Status(StatusCode::kInternal, "libelf refused EV_CURRENT");
  // libelf's API takes a mutable buffer; reading never writes to it, but a private copy keeps the
  // caller's bytes const-correct.
  std::vector<char> copy(static_cast<const char*>(data), static_cast<const char*>(data) + size);
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(copy.data(), copy.size()));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return corrupt_data("libelf cannot read it: {}", elf_errmsg(-1));
  TO_ASSIGN_OR_RETURN(info.kernels, read_kernels(elf.get(), size));
  return info;
}

}  // namespace tensoracle::bundle

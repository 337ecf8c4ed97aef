/* A folder picked in the browser (an <input type="file" webkitdirectory>), packed in the page as a .tar.gz:
 * a POSIX ustar archive (what every tar, Python's tarfile included, reads) gzipped by the browser's own
 * CompressionStream. No library, nothing from the internet.
 *
 * It mirrors what `tablanette bot submit` leaves out (hosting/source.py: version-control and cache folders,
 * node_modules, build output) and its limits, so a refusal comes before the upload with the same words.
 * A browser does not say which files are executable: a file that starts with "#!" is packed as one
 * (0755), every other as 0644. The arena packs the files again its own way, so the same folder gives the
 * same source hash whether it came from here, from a tar.gz or from the command line.
 */
"use strict";

const Tarball = (() => {
  const SKIPPED = new Set([
    ".git", ".hg", ".svn", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules", "build",
  ]);
  const MAX_FILES = 2000;
  const MAX_UNPACKED = 64 << 20;
  const MAX_PACKED = 8 << 20;
  const encoder = new TextEncoder();

  function supported() {
    return typeof CompressionStream === "function" && "webkitdirectory" in document.createElement("input");
  }

  /** The files to pack, sorted: each one's path inside the picked folder (the folder's own name cut off). */
  function entries(files) {
    const out = [];
    for (const file of files) {
      const parts = (file.webkitRelativePath || file.name).split("/").filter(Boolean);
      const inner = parts.length > 1 ? parts.slice(1) : parts;
      if (inner.slice(0, -1).some((folder) => SKIPPED.has(folder))) continue;
      out.push({ path: inner.join("/"), file });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Write ``value`` in octal, zero-padded, NUL-terminated, into ``len`` bytes of ``block`` at ``at``. */
  function octal(block, at, len, value) {
    const digits = value.toString(8);
    if (digits.length > len - 1) throw new Error(`a value of ${value} does not fit a tar header`);
    block.set(encoder.encode(digits.padStart(len - 1, "0")), at);
    block[at + len - 1] = 0;
  }

  /** A path as ustar keeps it: a name of at most 100 bytes, and the folders before it (155 bytes) apart. */
  function splitPath(path) {
    const bytes = encoder.encode(path);
    if (bytes.length <= 100) return [bytes, new Uint8Array(0)];
    for (let i = bytes.length - 1; i > 0; i--) {
      if (bytes[i] !== 0x2f) continue; // "/"
      if (bytes.length - i - 1 > 100) break;
      if (i <= 155) return [bytes.slice(i + 1), bytes.slice(0, i)];
    }
    throw new Error(`${path}: its path is too long for the tar format; pack the folder with tar instead`);
  }

  function header(path, size, mode) {
    const block = new Uint8Array(512);
    const [name, prefix] = splitPath(path);
    block.set(name, 0);
    octal(block, 100, 8, mode);
    octal(block, 108, 8, 0); // uid
    octal(block, 116, 8, 0); // gid
    octal(block, 124, 12, size);
    octal(block, 136, 12, 0); // mtime: none, as the arena packs
    block[156] = 0x30; // "0": a regular file
    block.set(encoder.encode("ustar\0" + "00"), 257);
    block.set(prefix, 345);
    block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
    const sum = block.reduce((a, b) => a + b, 0);
    octal(block, 148, 7, sum); // six digits and a NUL; the eighth byte stays a space
    return block;
  }

  async function modeOf(file) {
    const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
    return head[0] === 0x23 && head[1] === 0x21 ? 0o755 : 0o644; // "#!"
  }

  /** The picked folder's files as a gzipped tar (a Blob), or an Error saying what is wrong with them. */
  async function pack(files) {
    const list = entries(files);
    if (list.length === 0) throw new Error("the folder holds no file to submit");
    if (list.length > MAX_FILES) throw new Error(`the folder holds more than ${MAX_FILES} files`);
    const total = list.reduce((a, e) => a + e.file.size, 0);
    if (total > MAX_UNPACKED) throw new Error(`the folder holds more than ${MAX_UNPACKED >> 20} MB`);
    if (!list.some((e) => e.path === "bot.toml")) {
      throw new Error("the folder has no bot.toml at its top: pick the bot's own folder (its bot.toml says how to build and run it)");
    }
    const parts = [];
    for (const { path, file } of list) {
      parts.push(header(path, file.size, await modeOf(file)), file);
      const pad = (512 - (file.size % 512)) % 512;
      if (pad) parts.push(new Uint8Array(pad));
    }
    parts.push(new Uint8Array(1024)); // two empty blocks end the archive
    const gzipped = new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"));
    const packed = await new Response(gzipped).blob();
    if (packed.size > MAX_PACKED) {
      throw new Error(`the folder packs to ${(packed.size / (1 << 20)).toFixed(1)} MB; the limit is ${MAX_PACKED >> 20} MB`);
    }
    return new Blob([packed], { type: "application/gzip" });
  }

  return { supported, entries, pack };
})();

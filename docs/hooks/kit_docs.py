"""mkdocs hook: what makes the site from ``docs/`` and the code beside it.

- Generated parts: each page's ``<!-- kit:generated NAME -->`` lines become the part
  ``kit.cli.docgen`` makes from the code (the command-line reference from the CLI itself,
  the exit codes, the records schema, the flat row's columns, the reference figures), on
  every build, so they cannot drift. An unknown part fails the build.
- Files of the repository: a page links a file outside ``docs/`` the way GitHub shows it
  (``../stacks/grpc-go/README.md``, ``../protos/worker.proto``); the site shows that file as
  a page of its own under ``source/`` (markdown rendered, code in a block), and the link
  goes there. A link to a file that does not exist is left alone, so ``mkdocs build
  --strict`` fails on it like on any dead link.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from kit.cli.docgen import expand

LINK = re.compile(r"(\]\()([^)\s#]+)((?:#[^)\s]*)?\))")
SOURCE = "source"
LANGUAGES = {
    ".py": "python",
    ".proto": "protobuf",
    ".toml": "toml",
    ".go": "go",
    ".java": "java",
    ".js": "javascript",
    ".rs": "rust",
    ".sh": "bash",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".json": "json",
}

# repo path of each page (docs pages: docs/<src_uri>; repo files: their path), by src_uri
_repo_path_of: dict[str, str] = {}


def _roots(config: Any) -> tuple[Path, str]:
    repo = Path(config["config_file_path"]).resolve().parent
    docs = Path(config["docs_dir"]).resolve().relative_to(repo).as_posix()
    return repo, docs


def _target(repo: Path, page_repo_path: str, url: str) -> str | None:
    """The repository file a relative link points to, or None (not relative, not a file)."""
    if ":" in url or url.startswith("/"):
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), url))
    return path if not path.startswith("../") and (repo / path).is_file() else None


def _source_uri(path: str) -> str:
    return f"{SOURCE}/{path}" if path.endswith(".md") else f"{SOURCE}/{path}.md"


def _as_page(repo: Path, path: str) -> str:
    text = (repo / path).read_text(encoding="utf-8")
    if path.endswith(".md"):
        return text
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
    language = LANGUAGES.get(Path(path).suffix, "text")
    return f"# `{path}`\n\n{fence}{language}\n{text.rstrip()}\n{fence}\n"


def on_files(files: Files, config: Any) -> Files:
    repo, docs = _roots(config)
    _repo_path_of.clear()
    queue = []
    for file in files.documentation_pages():
        _repo_path_of[file.src_uri] = f"{docs}/{file.src_uri}"
        queue.append((f"{docs}/{file.src_uri}", Path(file.abs_src_path or "").read_text("utf-8")))
    while queue:
        page_path, text = queue.pop()
        for _, url, _ in LINK.findall(text):
            path = _target(repo, page_path, url)
            if path is None or path.startswith(f"{docs}/") or _source_uri(path) in _repo_path_of:
                continue
            uri = _source_uri(path)
            _repo_path_of[uri] = path
            content = _as_page(repo, path)
            files.append(File.generated(config, uri, content=content))
            if path.endswith(".md"):
                queue.append((path, content))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    repo, docs = _roots(config)
    src_uri = page.file.src_uri
    page_path = _repo_path_of.get(src_uri, f"{docs}/{src_uri}")
    if not src_uri.startswith(f"{SOURCE}/"):
        markdown = expand(markdown)

    def relink(match: re.Match[str]) -> str:
        path = _target(repo, page_path, match.group(2))
        if path is None:
            return match.group(0)
        uri = path.removeprefix(f"{docs}/") if path.startswith(f"{docs}/") else _source_uri(path)
        relative = posixpath.relpath(uri, posixpath.dirname(src_uri) or ".")
        return f"{match.group(1)}{relative}{match.group(3)}"

    return LINK.sub(relink, markdown)

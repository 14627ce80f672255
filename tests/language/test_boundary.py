"""English is read in one place: audiomind/language.

No module outside the reader package runs a regular expression over question or instruction text, and no
English phrase table lives outside the reader's data files. The check is on the source, by the AST:
- a module outside `audiomind/language` that imports `re` must be listed below with what its expressions read
  (model replies, file names, identifiers, transcripts' letters), never a question, a choice, an
  instruction or a rubric item;
- the judges modules that still read instructions with their own expressions are listed in `PENDING`; that
  list must only shrink (a module leaves it when its expressions move into `audiomind/language`);
- no module outside `audiomind/language` holds a phrase table: a collection literal of eight or more strings
  that are all lower-case English words or phrases (what a generator says and a metric's own definition are
  listed apart; the `PENDING` judges modules are exempt until they move); nor does the reader's own code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import audiomind

PACKAGE = Path(audiomind.__file__).resolve().parent

# module (relative to audiomind/) -> what its regular expressions read; none reads question or instruction text
NOT_QUESTION_TEXT: dict[str, str] = {
    "api.py": "descriptor paths (/proc/self/fd/N)",
    "audit/audit.py": "trace fields and identifiers",
    "audit/html.py": "HTML escaping of trace text",
    "audit/otel.py": "span and attribute names",
    "audit/stats.py": "identifiers in traces",
    "audit/timeline.py": "identifiers in traces",
    "backends/frontends/choice_confidence.py": "the answer key, think blocks and a choice letter in a model's reply",
    "backends/frontends/openai.py": "model names (reasoning models)",
    "backends/frontends/replies.py": "evidence ids in a model's reply",
    "backends/jsonparse.py": "JSON inside a model's reply",
    "backends/planners/llm_client.py": "server error messages, think blocks of a model's reply",
    "backends/planners/llm_prompts.py": ("evidence-list lines and tool categories of the planner's own rendering, tool "
                                         "names in the plan a model wrote, the first sentence of a tool manifest's text"),
    "backends/recording.py": "recorded reply keys",
    "backends/registry.py": "backend specs ('llama:MODEL@URL')",
    "backends/retry.py": "HTTP error messages",
    "backends/spans.py": "time stamps in a model's plan ('3.5 s', '00:12')",
    "bench/batch_providers.py": "audio placeholders in recorded request messages",
    "bench/runner.py": "item ids and file names",
    "bench/tasks/mmar.py": "the official grader's word splitting of a model's answer",
    "bench/tasks/msu.py": "the official grader's letter extraction from a model's answer; annotation folder names",
    "config.py": "rate limits as written ('500/200000')",
    "graph/nodes.py": "the format checker: a final answer's letter or option text (shape only)",
    "judges/caption_metrics.py": "tokens of captions (the metrics' own tokenisers)",
    "judges/edit.py": "the time locators ('(at 4.98 s)') of the judge's own difference captions",
    "judges/lexicon.py": "WordNet glosses",
    "judges/llm.py": "yes / no and think blocks in a model's reply",
    "judges/pairs.py": "clauses of a caption",
    "paths.py": "control characters and Markdown-active characters to escape for display",
    "prompts.py": "template placeholders and evidence blocks",
    "serve.py": "request paths and ids",
    "serve_guards.py": "the reason in an audio probe's error message",
    "tools/descriptors/speech.py": "letters of recognised words (spelled-out words)",
    "tools/descriptors/playing.py": "a chord's attack pattern as a string of S (single onset) and B (block) marks",
    "tools/mcp_server.py": "tool names and URIs",
    "tools/mcp_transport.py": "the JSON-RPC id of an unreadable request line",
}

# judges modules whose expressions still read instructions, rubric items or AURA questions themselves
PENDING: dict[str, str] = {
}

# modules whose word lists are not for reading text: what a generator says, a metric's own definition
NOT_FOR_READING: dict[str, str] = {
    "bench/tasks/synthetic_generate.py": "what the synthetic generator's voices say (item content, not reading)",
    "judges/caption_metrics.py": "the caption metrics' own stop-word list (part of each metric's definition)",
    "judges/pairs.py": "the background corpus of CIDEr-D document frequencies",
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "language" not in p.relative_to(PACKAGE).parts[:1])


def _imports_re(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "re" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "re":
            return True
    return False


def test_no_regular_expressions_over_question_text_outside_the_reader():
    importing = {str(p.relative_to(PACKAGE)) for p in _modules() if _imports_re(ast.parse(p.read_text()))}
    unlisted = sorted(importing - set(NOT_QUESTION_TEXT) - set(PENDING))
    assert not unlisted, (
        "these modules use regular expressions but are not listed as reading something other than question or "
        f"instruction text: {unlisted}. Read English through audiomind.language (cues, claims, text) instead.")
    stale = sorted((set(NOT_QUESTION_TEXT) | set(PENDING)) - importing)
    assert not stale, f"listed modules that no longer use `re` (remove them from the lists): {stale}"


def test_the_reasoning_step_reads_frames_only():
    reasoning = [p for p in _modules() if p.relative_to(PACKAGE).parts[0] == "reasoning"]
    assert reasoning
    users = [str(p.relative_to(PACKAGE)) for p in reasoning if _imports_re(ast.parse(p.read_text()))]
    assert users == [], f"the reasoning step matches English itself in {users}"


def test_nothing_is_pending():
    # every judges module has moved its reading into audiomind/language; a new entry is a regression
    assert PENDING == {}


def _is_phrase(s: object) -> bool:
    return isinstance(s, str) and bool(s) and all(w.isalpha() and w.islower() for w in s.replace("'", "").split())


def _phrase_tables(tree: ast.AST) -> list[tuple[int, list[str]]]:
    found = []
    types = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)
             and isinstance(n.value, ast.Name) and n.value.id == "Literal"}  # Literal["a", "b", ...] is a type
    for node in ast.walk(tree):
        if id(node) in types:
            continue
        items: list[ast.expr] = []
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        values = [e.value for e in items if isinstance(e, ast.Constant)]
        if len(values) >= 8 and len(values) == len(items) and all(_is_phrase(v) for v in values):
            found.append((node.lineno, [str(v) for v in values]))
    return found


def test_no_english_phrase_table_outside_the_readers_data_files():
    offenders = []
    for p in _modules():
        rel = str(p.relative_to(PACKAGE))
        if rel in NOT_FOR_READING or rel in PENDING:
            continue
        offenders += [f"{rel}:{line}: {values[:6]}..." for line, values in _phrase_tables(ast.parse(p.read_text()))]
    assert not offenders, "English phrase tables in code (move them to a data file the reader loads):\n" + \
        "\n".join(offenders)


def test_the_reader_package_keeps_its_phrases_in_data_files():
    tables = [(str(p.relative_to(PACKAGE)), line) for p in (PACKAGE / "language").rglob("*.py")
              for line, _ in _phrase_tables(ast.parse(p.read_text()))]
    assert tables == [], f"phrase tables in the reader's code, not its data files: {tables}"

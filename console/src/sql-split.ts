/**
 * Splits an editor's text into statements at the semicolons that end them: not inside quotes,
 * identifiers or comments, and not inside a trigger's BEGIN … END body (CASE … END inside it is
 * told apart). Each statement then runs as its own step, so each gets its own result or error.
 */
export function splitStatements(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  let words: string[] = [];
  let word = "";
  let trigger = false;
  let inBody = false;
  let caseDepth = 0;
  const endWord = () => {
    if (!word) return;
    const w = word.toUpperCase();
    word = "";
    words.push(w);
    if (words.length <= 3 && words[0] === "CREATE" && w === "TRIGGER") trigger = true;
    if (!trigger) return;
    if (w === "BEGIN") inBody = true;
    else if (w === "CASE") caseDepth++;
    else if (w === "END") {
      if (caseDepth > 0) caseDepth--;
      else inBody = false;
    }
  };
  const finish = (end: number) => {
    const stmt = text.slice(start, end).trim();
    if (stmt && !isOnlyComments(stmt)) out.push(stmt);
    start = end + 1;
    words = [];
    trigger = false;
    inBody = false;
    caseDepth = 0;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      endWord();
      const close = c === "[" ? "]" : c;
      i = text.indexOf(close, i + 1);
      if (i === -1) break;
      // A doubled quote inside a string is the quote itself.
      while (c !== "[" && text[i + 1] === close) i = text.indexOf(close, i + 2);
      if (i === -1) break;
    } else if (c === "-" && text[i + 1] === "-") {
      endWord();
      const nl = text.indexOf("\n", i);
      i = nl === -1 ? text.length : nl;
    } else if (c === "/" && text[i + 1] === "*") {
      endWord();
      const close = text.indexOf("*/", i + 2);
      i = close === -1 ? text.length : close + 1;
    } else if (/[A-Za-z0-9_]/.test(c)) {
      word += c;
    } else {
      endWord();
      if (c === ";" && !inBody) finish(i);
    }
    i++;
  }
  endWord();
  finish(text.length);
  return out;
}

function isOnlyComments(stmt: string): boolean {
  return (
    stmt
      .replace(/--[^\n]*/g, "")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .trim() === ""
  );
}

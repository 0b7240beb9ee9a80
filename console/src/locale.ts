/**
 * Makes sure `navigator.language` is a tag `Intl` accepts, before anything else loads. A browser
 * started under a POSIX locale (`LANG=C.UTF-8`, as on most servers and in containers) reports
 * `en-US@posix`, which `Intl` refuses with a RangeError; the chart library formats numbers for
 * `navigator.language` as it loads, so that error left the whole console a blank page. This
 * module is imported first (see main.tsx): the language then reads as the nearest tag that works
 * (`en-US`), else `en-US`.
 */
function usable(tag: string | undefined): boolean {
  if (!tag) return false;
  try {
    new Intl.NumberFormat(tag);
    return true;
  } catch {
    return false;
  }
}

function nearest(tag: string): string {
  // `en-US@posix` and `en_US.UTF-8`: the POSIX modifier and codeset go, underscores become dashes.
  const cleaned = tag.split(/[@.]/)[0]!.replaceAll("_", "-");
  return usable(cleaned) ? cleaned : "en-US";
}

if (typeof navigator !== "undefined" && !usable(navigator.language)) {
  const language = nearest(navigator.language);
  const languages = [language, ...navigator.languages.filter((l) => usable(l) && l !== language)];
  Object.defineProperty(navigator, "language", { value: language, configurable: true });
  Object.defineProperty(navigator, "languages", { value: Object.freeze(languages), configurable: true });
}

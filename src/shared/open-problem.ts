/**
 * Why a file could not be opened for writing, for the usual causes, in the words of a one-line
 * start-up failure (the transcript, the API's log file).
 */
const OPEN_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'its directory does not exist (ENOENT)',
  ENOTDIR: 'a part of its path is not a directory (ENOTDIR)',
  EACCES: 'permission denied (EACCES)',
  EISDIR: 'it is a directory (EISDIR)',
  EROFS: 'the file system is read-only (EROFS)',
};

/** Takes what a `catch` caught as it is: a Node system error says its cause by its `code`. */
export function openProblem(error: unknown): string {
  const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : '';
  return OPEN_PROBLEMS[code] ?? (error instanceof Error ? error.message : String(error));
}

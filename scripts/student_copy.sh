#!/usr/bin/env bash
# Write the students' repository into DIR, from the committed HEAD (uncommitted edits are not in
# it): `bash scripts/student_copy.sh DIR`. DIR must be new or empty.
#   - `git archive HEAD`: teacher/ stays out (export-ignore in .gitattributes);
#   - the teacher's guide (docs/teacher/) and every kata key (teacher_key_*.json) removed;
#   - every Markdown file without its teacher-only parts (`!!! teacher` blocks, the README's
#     `<!-- teacher-only -->` regions), by course_site.editions, as the site's student edition;
#   - the GitHub Classroom workflow, scripts/classroom/classroom.yml, copied to
#     .github/workflows/classroom.yml when the course has one;
#   - then `git init` and one commit, so DIR is a repository to push.
# tests/site/test_editions.py checks the result.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -ne 1 ]; then
  echo "student_copy: usage: bash scripts/student_copy.sh DIR (a new or empty folder)" >&2
  exit 2
fi
dest="$1"
if [ -e "$dest" ] && { [ ! -d "$dest" ] || [ -n "$(ls -A "$dest")" ]; }; then
  echo "student_copy: $dest already exists and is not an empty folder; give a new one" >&2
  exit 2
fi
python="$repo/.venv/bin/python"
[ -x "$python" ] || python=python3
if ! "$python" -c "import course_site" 2>/dev/null; then
  echo "student_copy: the course is not set up in $repo (no .venv with course_site):" \
       "run 'bash scripts/setup.sh' there first, then this again" >&2
  exit 2
fi

mkdir -p "$dest"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$dest"
rm -rf "$dest/teacher" "$dest/docs/teacher"
find "$dest" -name 'teacher_key_*.json' -delete
find "$dest" -name '*.md' -print0 | xargs -0 "$python" -m course_site.editions
if [ -f "$dest/scripts/classroom/classroom.yml" ]; then
  mkdir -p "$dest/.github/workflows"
  cp "$dest/scripts/classroom/classroom.yml" "$dest/.github/workflows/classroom.yml"
fi

cd "$dest"
git init -q
git add -A
identity=()
git config user.email >/dev/null || identity=(-c user.name="RL Foundations course" \
                                               -c user.email="course@localhost")
git "${identity[@]}" commit -q -m "The course, student edition (from $(git -C "$repo" rev-parse --short HEAD))"
echo "student_copy: wrote the students' repository to $dest ($(git ls-files | wc -l) files)"

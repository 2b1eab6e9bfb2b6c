"""A loop's report as one self-contained HTML page: `page` (the document, its styles,
escaping), `charts` (the timeline and the spend chart, inline SVG), `report` (the page of
one loop), `files` (where it is written, and when not)."""

"""Text for people: table cells, aligned columns and Markdown, with every string from a file
escaped."""

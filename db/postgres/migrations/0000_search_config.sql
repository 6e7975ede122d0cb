-- Search folds accents: the text search configuration `colloquy` is `simple` (no stemming, no
-- stop words, as SQLite's unicode61 tokenizer) with `unaccent` in front of it. btree_gin lets
-- one GIN index hold (conversation_id, search), so a search reads one conversation's entries.
CREATE EXTENSION IF NOT EXISTS unaccent;
--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS btree_gin;
--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION colloquy (COPY = simple);
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION colloquy
	ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
	WITH unaccent, simple;

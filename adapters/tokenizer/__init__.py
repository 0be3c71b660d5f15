"""The Tokenizer port."""

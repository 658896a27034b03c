"""Serving bgai's bot to other programs: GNU Backgammon's external-player protocol (:mod:`bgai.serve.external`),
an HTTP/JSON API with a small web page (:mod:`bgai.serve.http`), both built on :class:`bgai.serve.bot.Bot`."""

"""remember's substrate, lens and frame as pure rules: ``view = render(substrate, lens, frame)``.

The substrate is everything the home stores — facts with their versions, the graph, documents,
and beside them the typed state-change events each write emits, decision traces and interaction
records. A lens (``lenses``) is a stored contract of what a consumer sees and may do; a frame
(``frames``) binds a consumer to its task. ``context`` admits, ranks and fits; ``receipts`` says
what a receipt signs; ``captures`` turns the interchange contract into a write; ``events`` turns
a write into its event. Nothing here reads or writes a store.
"""

"""What the agent's model calls spend (docs/architecture.md#usage-and-spend-limits): each call
recorded once with its tokens and its cost at that time (`ledger`), who it is counted against
(`spenders`), the days and months limits count in (`periods`), the spend limits (`limits`) and
the sums operators and people read (`reports`). Above the agent layer (a model's prices come
from its catalogue), below chat (exports show each answer's usage)."""

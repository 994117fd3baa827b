"""Reads and writes of a chat's rows that run on every turn, their SQL compiled by the ORM once per process.

Building and compiling a queryset costs far more CPU than SQLite spends answering it (0.25 ms for
the turn's row, 0.4 ms for the title and review check with its subquery, 0.3 ms for the session
UPDATE each stored message makes, 0.1 ms for a message's INSERT); the turn path runs two such reads
and six such writes every turn (the lease taken and given back, the question and the answer
stored, each with its session's UPDATE). The ORM still writes the SQL, once per database (and,
for an UPDATE, per set of columns), with placeholders where the values go; each run binds them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections, models, router, transaction
from django.db.models import F, Value, signals
from django.db.models.expressions import CombinedExpression
from django.db.models.sql import InsertQuery, UpdateQuery

# Stands for the session id while the query is compiled (no session has it: ids are hex).
_SESSION = "session id"


class SessionRowQuery:
    """`build(session_id)` -> a queryset of `model` giving one row (values_list, sliced [:1]);
    `row(session_id)` runs it."""

    def __init__(self, model: type[models.Model], build: Callable[[str], models.QuerySet[Any]]) -> None:
        self._model = model
        self._build = build
        self._compiled: dict[str, tuple[str, tuple[Any, ...], int]] = {}

    def _sql(self, alias: str) -> tuple[str, tuple[Any, ...], int]:
        compiled = self._compiled.get(alias)
        if compiled is None:  # two threads may both compile it once: the same SQL either way
            sql, params = self._build(_SESSION).query.get_compiler(using=alias).as_sql()
            compiled = self._compiled[alias] = (sql, tuple(params), list(params).index(_SESSION))
        return compiled

    def row(self, session_id: str) -> tuple[Any, ...] | None:
        alias = router.db_for_read(self._model)
        sql, params, at = self._sql(alias)
        with connections[alias].cursor() as cursor:
            cursor.execute(sql, (*params[:at], session_id, *params[at + 1 :]))
            row: tuple[Any, ...] | None = cursor.fetchone()
            return row


# The kinds of value one column of an UPDATE takes: its SQL differs by kind, not by value.
_NULL, _VALUE, _ADD = "null", "value", "add"


def _kind(column: str, value: Any) -> str | None:
    """How `value` is written into `column`: None for anything but a plain value, NULL, or
    `F(column) + n` (a count that concurrent writers add to), which the ORM writes each time."""
    if value is None:
        return _NULL
    if isinstance(value, CombinedExpression):
        added = (
            value.connector == CombinedExpression.ADD
            and isinstance(value.lhs, F)
            and value.lhs.name == column
            and isinstance(value.rhs, Value)
            and type(value.rhs.value) is int
        )
        return _ADD if added else None
    if hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save"):
        return None
    return _VALUE


Shape = tuple[str, str, tuple[tuple[str, str | None], ...]]


class RowUpdate:
    """UPDATE of a model's rows where the columns `where` equal the given values (the primary
    key: "pk"): `run(model, values, columns)` sets `columns` as `QuerySet.update` would, the SQL
    compiled by the ORM once per model, database and shape (which columns, and whether each is a
    value, NULL or `F(column) + n`). Each run binds its values as the ORM does (the field's own
    conversion); the first run of a shape checks that they are the ORM's own parameters, and a
    shape whose parameters differ (a field the ORM writes another way) keeps going through it."""

    def __init__(self, where: tuple[str, ...] = ("pk",)) -> None:
        self.where = where
        self._sql: dict[Shape, str | None] = {}  # None: this shape goes through the ORM

    def run(self, model: type[models.Model], values: tuple[Any, ...], columns: dict[str, Any]) -> int:
        """How many rows were updated."""
        alias = router.db_for_write(model)
        shape: Shape = (model._meta.label, alias, tuple((c, _kind(c, v)) for c, v in columns.items()))
        if any(kind is None for _, kind in shape[2]):
            return self._orm(model, values, columns)
        sql = self._sql.get(shape, "")
        connection = connections[alias]
        params = self._params(model, connection, values, columns)
        if sql == "":
            sql = self._sql[shape] = self._compile(model, alias, values, columns, params)
        if sql is None:
            return self._orm(model, values, columns)
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(sql, params)
            return int(cursor.rowcount)

    def _orm(self, model: type[models.Model], values: tuple[Any, ...], columns: dict[str, Any]) -> int:
        return int(model._default_manager.filter(**dict(zip(self.where, values, strict=True))).update(**columns))

    def _params(
        self, model: type[models.Model], connection: Any, values: tuple[Any, ...], columns: dict[str, Any]
    ) -> list[Any]:
        """The SET values (NULLs are written in the SQL), then the WHERE values: as the ORM binds them."""
        params: list[Any] = []
        for column, value in columns.items():
            if isinstance(value, CombinedExpression):
                params.append(value.rhs.value)
            elif value is not None:
                params.append(_field(model, column).get_db_prep_save(value, connection=connection))
        for column, value in zip(self.where, values, strict=True):
            field = _field(model, column)
            params.append(field.get_db_prep_value(field.get_prep_value(value), connection, prepared=True))
        return params

    def _compile(
        self, model: type[models.Model], alias: str, values: tuple[Any, ...], columns: dict[str, Any], params: list[Any]
    ) -> str | None:
        """The ORM's SQL for this shape, if the parameters bound above are the ORM's own."""
        # The WHERE clause in the given order (filter(**kwargs) would sort the names).
        conditions = [models.Q((column, value)) for column, value in zip(self.where, values, strict=True)]
        query = model._default_manager.filter(*conditions).query.chain(UpdateQuery)
        query.add_update_values(columns)
        sql, orm_params = query.get_compiler(alias).as_sql()
        return str(sql) if same_params(orm_params, params) else None


def same_params(orm: Any, ours: list[Any]) -> bool:
    """Whether the ORM's parameters are the ones bound here. A value the driver adapts is wrapped
    (psycopg's `Jsonb` for a JSON column on PostgreSQL) and two wrappers of one value are not
    equal: they are compared by what they wrap."""
    orm = list(orm)
    return len(orm) == len(ours) and all(_unwrapped(a) == _unwrapped(b) for a, b in zip(orm, ours, strict=True))


def _unwrapped(value: Any) -> Any:
    # Known by its module, not imported: importing psycopg costs every process ~0.1 s at start,
    # and on SQLite nothing else loads it.
    return value.obj if type(value).__module__ == "psycopg.types.json" else value


def _field(model: type[models.Model], name: str) -> Any:
    return model._meta.pk if name == "pk" else model._meta.get_field(name)


# The updates of one row by its primary key.
BY_PK = RowUpdate()


class RowInsert:
    """INSERT of one new row, as `Model.save()` writes it (every local column but the automatic
    primary key, each value's `pre_save` and conversion, the key read back), the SQL compiled by
    the ORM once per model and database. `run(obj)` is False, and nothing written, where `save()`
    must do it: a model with save signals or a key of its own, a value that is an expression, or
    a database where the ORM's own parameters were not the ones bound here."""

    def __init__(self) -> None:
        self._sql: dict[tuple[str, str], str | None] = {}  # None: this model goes through save()

    def run(self, obj: models.Model) -> bool:
        model, meta = type(obj), obj._meta
        if (
            meta.pk is not meta.auto_field
            or list(meta.db_returning_fields) != [meta.pk]
            or signals.pre_save.has_listeners(model)
            or signals.post_save.has_listeners(model)
        ):
            return False
        alias = router.db_for_write(model, instance=obj)
        connection = connections[alias]
        fields = [f for f in meta.local_concrete_fields if f is not meta.auto_field and not f.generated]
        values = [f.pre_save(obj, True) for f in fields]
        if any(hasattr(value, "resolve_expression") for value in values):
            return False
        params = [f.get_db_prep_save(value, connection=connection) for f, value in zip(fields, values, strict=True)]
        key = (meta.label, alias)
        sql = self._sql.get(key, "")
        if sql == "":
            sql = self._sql[key] = self._compile(obj, alias, fields, params)
        if sql is None:
            return False
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(sql, params)
            if connection.features.can_return_columns_from_insert:
                pk = cursor.fetchone()[0]  # the SQL's RETURNING, as the ORM compiled it
            else:
                pk = connection.ops.last_insert_id(cursor, meta.db_table, meta.pk.column)
        setattr(obj, meta.pk.attname, pk)
        obj._state.adding, obj._state.db = False, alias
        return True

    def sql(self, model: type[models.Model], alias: str) -> str | None:
        """The SQL compiled for `model` on database `alias` (None: not compiled, or not used)."""
        return self._sql.get((model._meta.label, alias)) or None

    def _compile(self, obj: models.Model, alias: str, fields: list[Any], params: list[Any]) -> str | None:
        """The ORM's SQL for this model's INSERT, if the parameters bound above are the ORM's own.
        (Its `pre_save` runs again here: a column it stamps, such as a creation time, is read back
        from the object, so both sides bind the same time.)"""
        query = InsertQuery(type(obj))
        query.insert_values(fields, [obj])
        compiler = query.get_compiler(alias)
        compiler.returning_fields = [obj._meta.pk]
        statements = compiler.as_sql()
        if len(statements) != 1:
            return None
        sql, orm_params = statements[0]
        connection = connections[alias]
        params[:] = [f.get_db_prep_save(getattr(obj, f.attname), connection=connection) for f in fields]
        return str(sql) if same_params(orm_params, params) else None


# The INSERT of a new message, the one row every turn adds twice.
NEW_ROW = RowInsert()

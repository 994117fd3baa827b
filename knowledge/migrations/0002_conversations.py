"""Second step of the move: the conversation models now belong to `knowledge`.

Only Django's model state changes here: the tables were renamed by agent 0003, so every row is
kept. The foreign keys of the change log and the pending writes now point at these models.
"""

import django.db.models.deletion
from django.db import migrations, models

import knowledge.models


def content_types_follow(apps, schema_editor):
    """Admin history and permissions of the moved models keep pointing at them."""
    content_type = apps.get_model("contenttypes", "ContentType")
    names = ["chatsession", "message", "reviewrun"]
    if not content_type.objects.filter(app_label="knowledge", model__in=names).exists():
        content_type.objects.filter(app_label="agent", model__in=names).update(app_label="knowledge")


class Migration(migrations.Migration):
    dependencies = [
        ("agent", "0003_tables_to_knowledge"),
        ("knowledge", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.CreateModel(
            name='ChatSession',
            fields=[
                ('id', models.CharField(default=knowledge.models._new_id, editable=False, max_length=32, primary_key=True, serialize=False)),
                ('name', models.CharField(blank=True, max_length=200, null=True, unique=True)),
                ('title', models.CharField(blank=True, default='', max_length=200)),
                ('source', models.CharField(choices=[('web', 'web'), ('cli', 'cli')], default='web', max_length=8)),
                ('model', models.CharField(blank=True, default='', max_length=200)),
                ('system_prompt', models.TextField(blank=True, default='')),
                ('started_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('end_reason', models.CharField(blank=True, default='', max_length=40)),
                ('turns_since_memory', models.PositiveIntegerField(default=0)),
                ('iters_since_skill', models.PositiveIntegerField(default=0)),
                ('user_turn_count', models.PositiveIntegerField(default=0)),
                ('message_count', models.PositiveIntegerField(default=0)),
                ('tool_call_count', models.PositiveIntegerField(default=0)),
                ('prompt_tokens', models.PositiveBigIntegerField(default=0)),
                ('completion_tokens', models.PositiveBigIntegerField(default=0)),
                ('last_prompt_tokens', models.PositiveBigIntegerField(default=0)),
                ('compression_count', models.PositiveIntegerField(default=0)),
                ('last_compressed_at', models.DateTimeField(blank=True, null=True)),
                ('parent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='children', to='knowledge.chatsession')),
            ],
            options={
                'ordering': ['-updated_at'],
            },
        ),
        migrations.CreateModel(
            name='Message',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('role', models.CharField(choices=[('system', 'system'), ('user', 'user'), ('assistant', 'assistant'), ('tool', 'tool')], max_length=10)),
                ('content', models.TextField(blank=True, default='')),
                ('tool_calls', models.JSONField(blank=True, null=True)),
                ('tool_call_id', models.CharField(blank=True, default='', max_length=100)),
                ('tool_name', models.CharField(blank=True, default='', max_length=100)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('token_count', models.PositiveIntegerField(default=0)),
                ('finish_reason', models.CharField(blank=True, default='', max_length=40)),
                ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='knowledge.chatsession')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='ReviewRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('trigger', models.CharField(default='nudge', max_length=40)),
                ('prompt_kind', models.CharField(max_length=20)),
                ('model', models.CharField(blank=True, default='', max_length=200)),
                ('status', models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed')], default='queued', max_length=10)),
                ('summary', models.TextField(blank=True, default='')),
                ('changes', models.JSONField(blank=True, default=list)),
                ('error', models.TextField(blank=True, default='')),
                ('prompt_tokens', models.PositiveIntegerField(default=0)),
                ('completion_tokens', models.PositiveIntegerField(default=0)),
                ('iterations', models.PositiveIntegerField(default=0)),
                ('duration_ms', models.PositiveIntegerField(default=0)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='reviews', to='knowledge.chatsession')),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.AddIndex(
            model_name='chatsession',
            index=models.Index(fields=['-updated_at'], name='agent_chats_updated_abb2f9_idx'),
        ),
        migrations.AddIndex(
            model_name='message',
            index=models.Index(fields=['session', 'id'], name='agent_messa_session_57c00d_idx'),
        ),
    
                migrations.AddField(model_name="chatsession", name="context_cut_to", field=models.BigIntegerField(blank=True, null=True)),
                migrations.AddField(model_name="chatsession", name="context_head_to", field=models.BigIntegerField(blank=True, null=True)),
                migrations.AddField(model_name="chatsession", name="context_summary", field=models.TextField(blank=True, default="")),
                migrations.AlterField(
                    model_name="knowledgechange",
                    name="session",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="knowledge_changes", to="knowledge.chatsession"),
                ),
                migrations.AlterField(
                    model_name="knowledgechange",
                    name="review",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="knowledge_changes", to="knowledge.reviewrun"),
                ),
                migrations.AlterField(
                    model_name="pendingwrite",
                    name="session",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to="knowledge.chatsession"),
                ),
                migrations.AlterField(
                    model_name="pendingwrite",
                    name="review",
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to="knowledge.reviewrun"),
                ),
            ]
        ),
        # The indexes take names of the new tables (SQLite has no RENAME INDEX: Django recreates them).
        migrations.RenameIndex(
            model_name="chatsession", new_name="knowledge_c_updated_6285d7_idx", old_name="agent_chats_updated_abb2f9_idx"
        ),
        migrations.RenameIndex(
            model_name="message", new_name="knowledge_m_session_849efb_idx", old_name="agent_messa_session_57c00d_idx"
        ),
        migrations.RunPython(content_types_follow, migrations.RunPython.noop),
    ]

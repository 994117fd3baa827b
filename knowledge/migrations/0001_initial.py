"""The records: conversations (sessions, messages, review runs) and what was learned from them.

A new database gets every table here. The conversation tables were first made by the `agent`
app's migrations, which are gone (that app has no models); a database made then is brought to
this shape by 0002_conversations, which renames its `agent_*` tables in place.
"""

import django.db.models.deletion
from django.db import migrations, models

import knowledge.models


class Migration(migrations.Migration):

    initial = True

    dependencies = []

    operations = [
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
                ('context_cut_to', models.BigIntegerField(blank=True, null=True)),
                ('context_head_to', models.BigIntegerField(blank=True, null=True)),
                ('context_summary', models.TextField(blank=True, default='')),
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
            index=models.Index(fields=['-updated_at'], name='knowledge_c_updated_6285d7_idx'),
        ),
        migrations.AddIndex(
            model_name='message',
            index=models.Index(fields=['session', 'id'], name='knowledge_m_session_849efb_idx'),
        ),
        migrations.CreateModel(
            name='SkillUsage',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=64, unique=True)),
                ('views', models.PositiveIntegerField(default=0)),
                ('uses', models.PositiveIntegerField(default=0)),
                ('last_used', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.CharField(blank=True, default='', max_length=10)),
            ],
        ),
        migrations.CreateModel(
            name='PendingWrite',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=10)),
                ('tool_name', models.CharField(max_length=40)),
                ('arguments', models.JSONField()),
                ('status', models.CharField(choices=[('pending', 'pending'), ('approved', 'approved'), ('rejected', 'rejected'), ('failed', 'failed')], default='pending', max_length=10)),
                ('result', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('review', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='knowledge.reviewrun')),
                ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='knowledge.chatsession')),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='KnowledgeChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('memory', 'memory'), ('skill', 'skill')], max_length=10)),
                ('target', models.CharField(max_length=200)),
                ('action', models.CharField(max_length=40)),
                ('actor', models.CharField(choices=[('agent', 'main agent'), ('review', 'review'), ('flush', 'flush'), ('user', 'user'), ('import', 'import'), ('external', 'external edit'), ('undo', 'undo')], max_length=10)),
                ('message_id', models.BigIntegerField(blank=True, null=True)),
                ('path', models.CharField(blank=True, default='', max_length=500)),
                ('before', models.TextField(blank=True, default='')),
                ('after', models.TextField(blank=True, default='')),
                ('existed_before', models.BooleanField(default=True)),
                ('exists_after', models.BooleanField(default=True)),
                ('summary', models.CharField(blank=True, default='', max_length=300)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('review', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='knowledge_changes', to='knowledge.reviewrun')),
                ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='knowledge_changes', to='knowledge.chatsession')),
                ('undoes', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='undone_by', to='knowledge.knowledgechange')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['kind', 'target'], name='knowledge_k_kind_f3fc94_idx')],
            },
        ),
    ]

"""Curation pages: memory, skills, the change log, review runs and the approval inbox."""

from django.urls import path

from knowledge.views import changes, curator, learning, memory, reviews, skills

urlpatterns = [
    path("memory/", memory.memory_page, name="memory"),
    path("memory/merge/", memory.memory_merge, name="memory_merge"),
    path("c/<str:session_id>/feedback/", learning.feedback, name="answer_feedback"),
    path("c/<str:session_id>/prompt/", learning.prompt_page, name="session_prompt"),
    path("learned/<int:pk>/undo/", learning.learned_undo, name="learned_undo"),
    path("memory/<str:target>/add/", memory.add_entry, name="memory_add"),
    path("memory/<str:target>/<int:index>/", memory.entry, name="memory_entry"),
    path("memory/<str:target>/<int:index>/edit/", memory.edit_entry, name="memory_edit"),
    path("memory/<str:target>/<int:index>/delete/", memory.delete_entry, name="memory_delete"),
    path("skills/", skills.skill_list, name="skills"),
    path("skills/bulk/", skills.bulk, name="skills_bulk"),
    path("skills/new/", skills.new_skill, name="skill_new"),
    path("skills/curator/run/", curator.run_now, name="skills_curator_run"),
    path("skills/archived/<str:folder>/restore/", curator.restore, name="skill_restore"),
    path("skills/<str:name>/", skills.skill_detail, name="skill_detail"),
    path("skills/<str:name>/edit/", skills.edit_skill, name="skill_edit"),
    path("skills/<str:name>/toggle/", skills.toggle_skill, name="skill_toggle"),
    path("skills/<str:name>/delete/", skills.delete_skill, name="skill_delete"),
    path("skills/<str:name>/pin/", curator.pin, name="skill_pin"),
    path("skills/<str:name>/archive/", curator.archive_now, name="skill_archive"),
    path("changes/", changes.change_list, name="changes"),
    path("changes/<int:pk>/", changes.change_detail, name="change_detail"),
    path("changes/<int:pk>/undo/", changes.undo_change, name="change_undo"),
    path("reviews/", reviews.review_list, name="reviews"),
    path("reviews/<int:pk>/", reviews.review_detail, name="review_detail"),
    path("reviews/<int:pk>/undo/", reviews.undo_review, name="review_undo"),
    path("pending/", reviews.pending_list, name="pending"),
    path("pending/decide/", reviews.pending_bulk, name="pending_bulk"),
    path("pending/approve-review/", reviews.pending_approve_review, name="pending_approve_review"),
    path("pending/<int:pk>/approve/", reviews.pending_approve, name="pending_approve"),
    path("pending/<int:pk>/reject/", reviews.pending_reject, name="pending_reject"),
    path("pending/<int:pk>/conflict/", reviews.decide_conflict, name="pending_conflict"),
]

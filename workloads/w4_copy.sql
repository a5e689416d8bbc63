COPY copy_unlogged FROM :rows_file;

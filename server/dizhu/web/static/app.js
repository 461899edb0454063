// dizhu.v1.TableService placeholder
